/** Types shared by the mail reader, the message list and the inbox. */

/** The header of one message: enough to list it, not its body. */
export interface MessageHeader {
  /** Stable identifier of the message within its database. */
  id: string;
  /** The sender, as "Name <address>" or a bare address. */
  from: string;
  /** The subject line; may be empty. */
  subject: string;
  /** When the message arrived, as an ISO 8601 timestamp. */
  date: string;
}

/** A stored message: its header plus what the reader never loads. */
export interface StoredMessage extends MessageHeader {
  /** Folder the message is filed in, e.g. "INBOX" or "Archive". */
  folder: string;
  /** The full body text. */
  body: string;
}

/**
 * A handle on a local mail database. The reader is given one of these; it
 * cannot open or find a mailbox by itself.
 */
export interface MailDatabase {
  /** Where the database lives, for display only. */
  path: string;
  /** Every stored message, in arrival order. */
  messages: StoredMessage[];
}

/** "2026-11-03T08:15:00Z" → "2026-11". */
export function monthOf(isoDate: string): string {
  return isoDate.slice(0, 7);
}

/** Copies only the header fields, leaving the body behind. */
export function toHeader(message: StoredMessage): MessageHeader {
  const { id, from, subject, date } = message;
  return { id, from, subject, date };
}
