/**
 * A reusable list of message headers. It renders whatever headers it is
 * given and reports clicks through `onSelect`; it reads no mail itself.
 */
import { NAME, pattern, Stream, UI, type VNode } from "commonfabric";
import type { MessageHeader } from "./types";

/** What the list shows and where selections go. */
interface MessageListInput {
  /** The headers to render, in display order. */
  messages: MessageHeader[];
  /** Receives the id of a message when its row is clicked. */
  onSelect?: Stream<{ id: string }>;
}

/** A rendered list of messages. */
export interface MessageListOutput {
  [UI]: VNode;
}

/** "Ada Lovelace <ada@example.org>" → "Ada Lovelace". */
export function senderName(from: string): string {
  const match = from.match(/^\s*"?([^"<]+?)"?\s*</);
  return match ? match[1] : from;
}

export function shortDate(iso: string): string {
  return iso.slice(5, 10).replace("-", "/");
}

export default pattern<MessageListInput, MessageListOutput>(
  ({ messages, onSelect }) => ({
    [UI]: (
      <cf-vscroll style="height: 100%;">
        <cf-vstack gap="0">
          {messages.map((m) => (
            <cf-hstack
              gap="3"
              style="padding: 0.5rem 1rem; border-bottom: 1px solid #eee; cursor: pointer;"
              onClick={() => onSelect?.send({ id: m.id })}
            >
              <strong style="width: 12rem;">{senderName(m.from)}</strong>
              <span style="flex: 1;">{m.subject || "(no subject)"}</span>
              <small>{shortDate(m.date)}</small>
            </cf-hstack>
          ))}
        </cf-vstack>
      </cf-vscroll>
    ),
  }),
);
