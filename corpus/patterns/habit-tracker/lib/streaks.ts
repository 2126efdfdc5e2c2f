/** Streak arithmetic over lists of ISO dates (YYYY-MM-DD). */

const DAY_MS = 24 * 60 * 60 * 1000;

/** Whole days from `a` to `b`; negative when `b` is earlier. */
export function daysBetween(a: string, b: string): number {
  return Math.round((Date.parse(b) - Date.parse(a)) / DAY_MS);
}

/** Removes duplicates and sorts oldest first. */
export function normalizeDates(dates: string[]): string[] {
  return [...new Set(dates)].sort();
}

/**
 * The run of consecutive days ending on `today` (or yesterday, so a streak
 * survives until the day is over).
 */
export function currentStreak(dates: string[], today: string): number {
  const days = normalizeDates(dates);
  if (days.length === 0) return 0;
  const gap = daysBetween(days[days.length - 1], today);
  if (gap > 1) return 0;
  let run = 1;
  for (let i = days.length - 1; i > 0; i--) {
    if (daysBetween(days[i - 1], days[i]) !== 1) break;
    run++;
  }
  return run;
}

/** The longest run of consecutive days anywhere in the history. */
export function longestStreak(dates: string[]): number {
  const days = normalizeDates(dates);
  let best = 0;
  let run = 0;
  for (let i = 0; i < days.length; i++) {
    run = i > 0 && daysBetween(days[i - 1], days[i]) === 1 ? run + 1 : 1;
    best = Math.max(best, run);
  }
  return best;
}
