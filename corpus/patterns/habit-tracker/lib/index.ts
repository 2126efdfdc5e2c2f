/** The habit tracker's helper library; import it as "./lib". */
export { currentStreak, daysBetween, longestStreak } from "./streaks";

/** A habit and the days it was kept. */
export interface Habit {
  /** What the habit is, e.g. "Read 20 pages". */
  name: string;
  /** ISO dates on which the habit was done. */
  doneOn: string[];
}

/** Today's date as YYYY-MM-DD in the viewer's clock. */
export function todayIso(now: Date = new Date()): string {
  return now.toISOString().slice(0, 10);
}

/** A fire for every week of streak, capped so the row stays short. */
export function flames(streak: number): string {
  return "🔥".repeat(Math.min(5, Math.floor(streak / 7)));
}

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/**
 * The last seven days as a row of marks, oldest first: "●" where the habit
 * was kept, "○" where it was not.
 */
export function lastWeek(habit: Habit, today: string): string {
  const end = Date.parse(today);
  const marks: string[] = [];
  for (let back = 6; back >= 0; back--) {
    const day = new Date(end - back * 86_400_000).toISOString().slice(0, 10);
    marks.push(habit.doneOn.includes(day) ? "●" : "○");
  }
  return marks.join("");
}

/** Short weekday name for an ISO date, e.g. "Mon". */
export function weekdayOf(isoDate: string): string {
  return WEEKDAYS[new Date(isoDate).getUTCDay()];
}
