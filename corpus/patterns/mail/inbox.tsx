/**
 * Inbox: a simple list view of your email inbox. It composes the mail
 * reader, which loads one month of headers from the database, with the
 * message list, which renders them and reports the selected message.
 */
import {
  computed,
  Default,
  handler,
  NAME,
  pattern,
  Stream,
  UI,
  type VNode,
  Writable,
} from "commonfabric";
import MailReader from "./mail-reader";
import MessageList from "./message-list.tsx";
import type { MailDatabase, MessageHeader } from "./types";

/** What the inbox needs: a database to read and the month to show. */
interface InboxInput {
  /** The mail database; passed straight on to the reader. */
  db: Writable<MailDatabase>;
  /** The month shown, as YYYY-MM. */
  month?: string | Default<"2026-11">;
  /** Id of the message the user last clicked; empty when none. */
  selectedId?: Writable<string | Default<"">>;
}

/** A simple list view of your email inbox. #inbox #email */
export interface InboxOutput {
  [NAME]: string;
  [UI]: VNode;
  /** The headers listed, newest first. */
  messages: MessageHeader[];
  /** The header of the selected message, if any. */
  selected: MessageHeader | undefined;
  /** Selects a message by id. */
  select: Stream<{ id: string }>;
}

const chooseMessage = handler<{ id: string }, { selectedId: Writable<string> }>(
  ({ id }, { selectedId }) => selectedId.set(id),
);

export default pattern<InboxInput, InboxOutput>(({ db, month, selectedId }) => {
  const reader = MailReader({ db, month });
  const select = chooseMessage({ selectedId });

  const selected = computed(() =>
    reader.messages.find((m) => m.id === selectedId.get())
  );

  return {
    [NAME]: computed(() => `Inbox · ${reader.messages.length}`),
    [UI]: (
      <cf-screen>
        <cf-hstack slot="header" gap="2" style="align-items: baseline;">
          <cf-heading level={4}>Inbox</cf-heading>
          {reader}
        </cf-hstack>
        <MessageList messages={reader.messages} onSelect={select} />
        <cf-card slot="footer" style="padding: 0.5rem 1rem;">
          {computed(() =>
            selected ? `${selected.subject} — ${selected.from}` : "Nothing selected"
          )}
        </cf-card>
      </cf-screen>
    ),
    messages: reader.messages,
    selected,
    select,
  };
});
