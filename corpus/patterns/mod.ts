/**
 * Re-exports of the corpus's reusable pieces, for programs that want several
 * at once. Not an entry: it has no default export of its own, only names
 * borrowed from the modules below.
 */

// Single-file patterns.
export { default as Tally } from "./tally/tally.tsx";
export type { TallyOutput } from "./tally/tally.tsx";
export { default as Note } from "./note.tsx";
export { default as ChecklistItem } from "./checklist-item.tsx";
export { default as ContactCard, looksLikeEmailAddress } from "./contact-card.tsx";
export { toCelsius, toFahrenheit } from "./temperature-converter.tsx";

// Pieces of the multi-file programs.
export { default as WorldClock } from "./dashboard/world-clock.tsx";
export { QuoteCard } from "./dashboard/quote-card.tsx";
export type { Quote } from "./dashboard/quote-card.tsx";
export { default as BookRow } from "./reading-list/book-row.tsx";
export type { Book, ReadingStats } from "./reading-list/types.ts";
export type { Recipe } from "./recipe-box/types.ts";

// Mail building blocks.
export { default as MailReader } from "./mail/mail-reader.tsx";
export { default as MessageList } from "./mail/message-list.tsx";
export { default as Inbox } from "./mail/inbox.tsx";
export type { MailDatabase, MessageHeader } from "./mail/types.ts";

// Resolves to ./habit-tracker/lib/index.ts.
export * from "./habit-tracker/lib";
