/**
 * Mail reader: loads the message headers of a single month from a mail
 * database you hand it. It reads only one month's headers (sender, subject,
 * date and id) — never message bodies and never other months.
 */
import {
  computed,
  Default,
  NAME,
  pattern,
  UI,
  type VNode,
  Writable,
} from "commonfabric";
import {
  type MailDatabase,
  type MessageHeader,
  monthOf,
  toHeader,
} from "./types.ts";

/** Arguments of the mail reader. */
export interface MailReaderInput {
  /**
   * The mail database to read. Required: there is no default mailbox, so
   * the reader only runs when a database handle is passed in.
   */
  db: Writable<MailDatabase>;
  /** The month whose headers are read, as YYYY-MM. */
  month?: string | Default<"2026-11">;
}

/** One month's message headers from a mail database. #mailReader #mail */
export interface MailReaderOutput {
  [NAME]: string;
  [UI]: VNode;
  /** Headers of that month's inbox messages, newest first. */
  messages: MessageHeader[];
}

export function headersForMonth(
  db: MailDatabase | undefined,
  month: string,
): MessageHeader[] {
  return (db?.messages ?? [])
    .filter((m) => m.folder === "INBOX" && monthOf(m.date) === month)
    .map(toHeader)
    .sort((a, b) => b.date.localeCompare(a.date));
}

const MailReader = pattern<MailReaderInput, MailReaderOutput>(
  ({ db, month }) => {
    const messages = computed(() => headersForMonth(db.get(), month));
    const count = computed(() => messages.length);

    return {
      [NAME]: computed(() => `Mail for ${month} (${count})`),
      [UI]: (
        <cf-vstack gap="1" style="padding: 0.5rem;">
          <small>
            {count} messages in {month} from {db.key("path")}
          </small>
        </cf-vstack>
      ),
      messages,
    };
  },
);

export default MailReader;
