import {
  action,
  computed,
  NAME,
  pattern,
  Stream,
  UI,
  type VNode,
  Writable,
} from "commonfabric";
import type { Book } from "./types";
import { progressPercent } from "./stats.ts";

/** The one book a row shows. */
interface BookRowInput {
  /** The book, writable so the row can record progress. */
  book: Writable<Book>;
}

/** One row of a reading list with a progress bar. */
export interface BookRowOutput {
  [NAME]: string;
  [UI]: VNode;
  /** Percentage of pages read, 0–100. */
  percent: number;
  /** Records ten more pages read. */
  readMore: Stream<void>;
}

const STATUS_ICON = { want: "📚", reading: "📖", finished: "✅" } as const;

export default pattern<BookRowInput, BookRowOutput>(({ book }) => {
  const percent = computed(() => progressPercent(book.get()));

  const readMore = action(() => {
    const b = book.get();
    const pagesRead = Math.min(b.pages || Infinity, b.pagesRead + 10);
    const status = b.pages && pagesRead >= b.pages ? "finished" : "reading";
    book.set({ ...b, pagesRead, status });
  });

  return {
    [NAME]: computed(() => book.get().title),
    [UI]: (
      <cf-hstack gap="2" style="align-items: center;">
        <span>{computed(() => STATUS_ICON[book.get().status])}</span>
        <cf-vstack gap="0" style="flex: 1;">
          <strong>{book.key("title")}</strong>
          <small>{book.key("author")}</small>
          <progress max="100" value={percent} />
        </cf-vstack>
        <cf-button variant="ghost" onClick={readMore}>+10 pages</cf-button>
      </cf-hstack>
    ),
    percent,
    readMore,
  };
});
