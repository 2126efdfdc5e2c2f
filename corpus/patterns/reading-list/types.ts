/** Shapes shared by every file of the reading list. */

/** Where a book stands on the list. */
export type ReadingStatus = "want" | "reading" | "finished";

/** A book on the list. */
export interface Book {
  /** Title as printed on the cover. */
  title: string;
  /** Author or authors, comma separated. */
  author: string;
  /** Total pages; 0 when unknown. */
  pages: number;
  /** Pages read so far. */
  pagesRead: number;
  status: ReadingStatus;
  /** 1–5 stars once finished; 0 means not rated. */
  rating: number;
}

/** Totals shown at the top of the list. */
export interface ReadingStats {
  finished: number;
  inProgress: number;
  pagesRead: number;
  averageRating: number;
}

/** An entry for the "add a book" form before it becomes a Book. */
export interface BookDraft {
  /** Required: a book needs at least a title. */
  title: string;
  /** Optional author line. */
  author?: string;
  /** Optional page count. */
  pages?: number;
}
