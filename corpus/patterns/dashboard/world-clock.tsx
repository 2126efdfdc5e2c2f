import {
  computed,
  Default,
  NAME,
  pattern,
  UI,
  type VNode,
} from "commonfabric";

/** Which clock face to draw. */
interface WorldClockInput {
  /** A label above the time, usually the city. */
  label?: string | Default<"UTC">;
  /** Minutes ahead of UTC. */
  offsetMinutes?: number | Default<0>;
  /** The moment to show, as epoch milliseconds; the parent supplies it. */
  now?: number | Default<0>;
}

/** A labelled digital clock for one time zone. #clock */
export interface WorldClockOutput {
  [NAME]: string;
  [UI]: VNode;
  /** The shown time as HH:MM. */
  time: string;
}

export function shiftedTime(epochMs: number, offsetMinutes: number): string {
  const shifted = new Date(epochMs + offsetMinutes * 60_000);
  return shifted.toISOString().slice(11, 16);
}

const WorldClock = pattern<WorldClockInput, WorldClockOutput>(
  ({ label, offsetMinutes, now }) => {
    const time = computed(() => shiftedTime(now, offsetMinutes));

    return {
      [NAME]: computed(() => `${label} ${time}`),
      [UI]: (
        <cf-card style="padding: 0.75rem; min-width: 7rem; text-align: center;">
          <small>{label}</small>
          <div style={{ fontSize: "1.6rem", fontVariantNumeric: "tabular-nums" }}>
            {time}
          </div>
        </cf-card>
      ),
      time,
    };
  },
);

export default WorldClock;
