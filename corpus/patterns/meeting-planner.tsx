/**
 * Meeting planner: pick a time in your own city and see what time it is for
 * everyone else. The city list ships with the program as a data file.
 */
import {
  computed,
  dataFile,
  Default,
  NAME,
  pattern,
  UI,
  type VNode,
  Writable,
} from "commonfabric";

/** One row of ./data/timezones.json. */
interface Zone {
  city: string;
  zone: string;
  /** Minutes ahead of UTC in standard time. */
  offset: number;
}

interface ZoneFile {
  zones: Zone[];
}

/** Where the meeting is anchored and who attends. */
interface PlannerInput {
  /** The organiser's city; must match a city in the data file. */
  homeCity?: Writable<string | Default<"Lisbon">>;
  /** Proposed start, as minutes after local midnight in the home city. */
  startMinutes?: Writable<number | Default<540>>;
  /** Cities of the people invited. */
  attendees?: Writable<string[] | Default<["Berlin", "Tokyo"]>>;
}

/** Local start times of a meeting across several cities. #meeting #timezone */
export interface PlannerOutput {
  [NAME]: string;
  [UI]: VNode;
  /** One line per attendee city, e.g. "Tokyo 18:00". */
  localTimes: string[];
}

// The read is the declaration: the file travels with the source.
const ZONES = (JSON.parse(dataFile("./data/timezones.json")) as ZoneFile).zones;

function offsetOf(city: string): number {
  return ZONES.find((z) => z.city === city)?.offset ?? 0;
}

export function clock(minutes: number): string {
  const m = ((minutes % 1440) + 1440) % 1440;
  const hh = String(Math.floor(m / 60)).padStart(2, "0");
  const mm = String(m % 60).padStart(2, "0");
  return `${hh}:${mm}`;
}

export default pattern<PlannerInput, PlannerOutput>(
  ({ homeCity, startMinutes, attendees }) => {
    const localTimes = computed(() => {
      const utc = startMinutes.get() - offsetOf(homeCity.get());
      return attendees.get().map((city) =>
        `${city} ${clock(utc + offsetOf(city))}`
      );
    });
    const cityItems = ZONES.map((z) => ({ label: z.city, value: z.city }));

    return {
      [NAME]: computed(() => `Meeting at ${clock(startMinutes.get())}`),
      [UI]: (
        <cf-vstack gap="2" style="padding: 1rem;">
          <cf-select $value={homeCity} items={cityItems} />
          <cf-input type="number" $value={startMinutes} />
          <ul>
            {localTimes.map((line) => <li>{line}</li>)}
          </ul>
        </cf-vstack>
      ),
      localTimes,
    };
  },
);
