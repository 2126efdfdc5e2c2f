/**
 * Month picker: steps a YYYY-MM month back and forth. A building block for
 * views that show one month at a time.
 */
import { Default, handler, NAME, pattern, Stream, UI, type VNode, Writable } from "commonfabric";

interface MonthPickerInput {
  /** The month shown, as YYYY-MM. */
  month?: Writable<string | Default<"2026-11">>;
}

/** Step through months. #calendar #month */
export interface MonthPickerOutput {
  [NAME]: string;
  [UI]: VNode;
  /** The month currently picked, as YYYY-MM. */
  month: string;
  /** Moves by a number of months (negative goes back). */
  step: Stream<{ by: number }>;
}

export function shiftMonth(month: string, by: number): string {
  const [y, m] = month.split("-").map(Number);
  const index = y * 12 + (m - 1) + by;
  const year = Math.floor(index / 12);
  const mon = (index % 12) + 1;
  return `${year}-${String(mon).padStart(2, "0")}`;
}

const stepMonth = handler<{ by: number }, { month: Writable<string> }>(
  ({ by }, { month }) => month.set(shiftMonth(month.get(), by)),
);

export default pattern<MonthPickerInput, MonthPickerOutput>(({ month }) => {
  const step = stepMonth({ month });
  return {
    [NAME]: "Month picker",
    [UI]: (
      <cf-hstack gap="2">
        <cf-button onClick={() => step.send({ by: -1 })}>‹</cf-button>
        <span>{month}</span>
        <cf-button onClick={() => step.send({ by: 1 })}>›</cf-button>
      </cf-hstack>
    ),
    month,
    step,
  };
});
