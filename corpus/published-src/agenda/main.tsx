/**
 * Agenda: the items of one month in date order, with a month picker to move
 * between months.
 */
import { computed, Default, NAME, pattern, UI, type VNode, Writable } from "commonfabric";
import { type AgendaItem, itemsOfMonth } from "./format.ts";

interface AgendaInput {
  /** Everything on the agenda. */
  items: Writable<AgendaItem[] | Default<[]>>;
  /** The month shown, as YYYY-MM. */
  month?: Writable<string | Default<"2026-11">>;
}

/** A month of agenda items. #calendar #agenda */
export interface AgendaOutput {
  [NAME]: string;
  [UI]: VNode;
  /** The items of the month shown, in date order. */
  shown: AgendaItem[];
}

export default pattern<AgendaInput, AgendaOutput>(({ items, month }) => {
  const shown = computed(() => itemsOfMonth(items.get(), month.get()));
  return {
    [NAME]: computed(() => `Agenda ${month.get()}`),
    [UI]: (
      <cf-vstack gap="1">
        {shown.map((item) => (
          <cf-hstack gap="2">
            <small>{item.date}</small>
            <span>{item.title}</span>
          </cf-hstack>
        ))}
      </cf-vstack>
    ),
    shown,
  };
});
