import {
  computed,
  Default,
  NAME,
  pattern,
  UI,
  type VNode,
  Writable,
} from "commonfabric";

/** What a note starts with. */
interface NoteInput {
  /** A short heading shown in lists and in the tab title. */
  title?: Writable<string | Default<"Untitled">>;
  /** The body text, in plain Markdown. */
  body?: Writable<string | Default<"">>;
}

/** A small #note someone jotted down to remember later. */
export interface NoteOutput {
  [NAME]: string;
  [UI]: VNode;
  /** The heading of the note. */
  title: string;
  /** The full text of the note. */
  body: string;
  /** How many words the body holds, for list previews. */
  wordCount: number;
}

function countWords(text: string): number {
  const trimmed = (text ?? "").trim();
  return trimmed === "" ? 0 : trimmed.split(/\s+/).length;
}

export default pattern<NoteInput, NoteOutput>(({ title, body }) => {
  const wordCount = computed(() => countWords(body.get()));
  const heading = computed(() => `📝 ${title.get() || "Untitled"}`);

  return {
    [NAME]: heading,
    [UI]: (
      <cf-screen>
        <cf-vstack slot="header" gap="1">
          <cf-input $value={title} placeholder="Title" />
        </cf-vstack>
        <cf-vstack gap="2" style="padding: 1rem;">
          <cf-textarea
            $value={body}
            rows={12}
            placeholder="Write something worth keeping..."
          />
          <span style={{ color: "var(--cf-colors-gray-500)" }}>
            {wordCount} words
          </span>
        </cf-vstack>
      </cf-screen>
    ),
    title,
    body,
    wordCount,
  };
});
