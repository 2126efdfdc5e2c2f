/** Pure totals over a reading list. */
import type { Book, ReadingStats, ReadingStatus } from "./types";

export function progressPercent(book: Book): number {
  if (!book.pages) return 0;
  return Math.min(100, Math.round((book.pagesRead / book.pages) * 100));
}

export function computeStats(books: Book[]): ReadingStats {
  const finished = books.filter((b) => b.status === "finished");
  const rated = finished.filter((b) => b.rating > 0);
  const ratingSum = rated.reduce((sum, b) => sum + b.rating, 0);
  return {
    finished: finished.length,
    inProgress: books.filter((b) => b.status === "reading").length,
    pagesRead: books.reduce((sum, b) => sum + b.pagesRead, 0),
    averageRating: rated.length ? Math.round((ratingSum / rated.length) * 10) / 10 : 0,
  };
}

const STATUS_ORDER: Record<ReadingStatus, number> = {
  reading: 0,
  want: 1,
  finished: 2,
};

/** Books in shelf order: current reads first, then the pile, then done. */
export function shelfOrder(books: Book[]): Book[] {
  return [...books].sort((a, b) =>
    STATUS_ORDER[a.status] - STATUS_ORDER[b.status] ||
    a.title.localeCompare(b.title)
  );
}

/** Pages left across every unfinished book. */
export function pagesRemaining(books: Book[]): number {
  return books
    .filter((b) => b.status !== "finished")
    .reduce((sum, b) => sum + Math.max(0, b.pages - b.pagesRead), 0);
}
