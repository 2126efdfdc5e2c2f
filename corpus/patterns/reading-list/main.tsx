import {
  computed,
  Default,
  handler,
  NAME,
  navigateTo,
  pattern,
  Stream,
  UI,
  type VNode,
  Writable,
} from "commonfabric";
import type { Book, ReadingStats } from "./types";
import { computeStats } from "./stats";
import BookRow from "./book-row";

/** The books on the list. */
interface ReadingListInput {
  /** Every book, in the order they were added. */
  books: Writable<Book[] | Default<[]>>;
}

/** Books you want to read, are reading, or have finished. #books #readingList */
export interface ReadingListOutput {
  [NAME]: string;
  [UI]: VNode;
  books: Book[];
  /** Totals across the whole list. */
  stats: ReadingStats;
  /** Adds a book to the "want to read" pile. */
  addBook: Stream<{ title: string; author?: string; pages?: number }>;
}

const addToList = handler<
  { title: string; author?: string; pages?: number },
  { books: Writable<Book[]> }
>(({ title, author, pages }, { books }) => {
  if (!title.trim()) return;
  books.push({
    title: title.trim(),
    author: author ?? "",
    pages: pages ?? 0,
    pagesRead: 0,
    status: "want",
    rating: 0,
  });
});

export default pattern<ReadingListInput, ReadingListOutput>(({ books }) => {
  const stats = computed(() => computeStats(books.get()));
  const addBook = addToList({ books });

  return {
    [NAME]: computed(() => `Reading list · ${stats.finished} finished`),
    [UI]: (
      <cf-screen>
        <cf-hstack slot="header" gap="3">
          <span>{stats.inProgress} reading</span>
          <span>{stats.pagesRead} pages</span>
          <span>★ {stats.averageRating}</span>
        </cf-hstack>
        <cf-vstack gap="2" style="padding: 1rem;">
          {books.map((book) => (
            <cf-hstack gap="1">
              <BookRow book={book} />
              <cf-button
                variant="ghost"
                onClick={() => navigateTo(BookRow({ book }))}
              >
                Open
              </cf-button>
            </cf-hstack>
          ))}
        </cf-vstack>
        <cf-message-input
          slot="footer"
          placeholder="Add a title..."
          oncf-send={(e: { detail?: { message?: string } }) =>
            addBook.send({ title: e.detail?.message ?? "" })}
        />
      </cf-screen>
    ),
    books,
    stats,
    addBook,
  };
});
