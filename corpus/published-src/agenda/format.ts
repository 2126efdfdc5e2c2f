/** One entry of an agenda. */
export interface AgendaItem {
  /** ISO date, YYYY-MM-DD. */
  date: string;
  title: string;
}

/** Items of one month, in date order. */
export function itemsOfMonth(items: AgendaItem[], month: string): AgendaItem[] {
  return (items ?? [])
    .filter((item) => item.date.startsWith(month))
    .sort((a, b) => a.date.localeCompare(b.date));
}
