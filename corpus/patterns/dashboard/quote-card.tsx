import { computed, Default, NAME, pattern, UI, type VNode } from "commonfabric";

/** A saying and who said it. */
export interface Quote {
  text: string;
  by: string;
}

/** Which quote to show. */
interface QuoteCardInput {
  /** The pool to choose from. */
  quotes: Quote[] | Default<[]>;
  /** Picks the entry; the dashboard passes the day of the year. */
  seed?: number | Default<0>;
}

/** One quote from a pool, rotating with the seed. #quote */
export interface QuoteCardOutput {
  [NAME]: string;
  [UI]: VNode;
  /** The quote currently chosen, or undefined for an empty pool. */
  chosen: Quote | undefined;
}

export const QuoteCard = pattern<QuoteCardInput, QuoteCardOutput>(
  ({ quotes, seed }) => {
    const chosen = computed(() =>
      quotes.length ? quotes[Math.abs(seed) % quotes.length] : undefined
    );

    return {
      [NAME]: "Quote of the day",
      [UI]: (
        <blockquote style="margin: 0; padding: 0.5rem 1rem; border-left: 3px solid #ccc;">
          <p>{computed(() => chosen?.text ?? "Nothing to quote yet.")}</p>
          <footer>{computed(() => (chosen ? `— ${chosen.by}` : ""))}</footer>
        </blockquote>
      ),
      chosen,
    };
  },
);

export default QuoteCard;
