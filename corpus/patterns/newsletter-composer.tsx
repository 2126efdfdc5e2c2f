/**
 * Newsletter composer: drafts the text of an email newsletter.
 *
 * Write a subject line and a few sections and it assembles an email-ready
 * draft you can paste into any email client. It does not read your email,
 * does not send email, and knows nothing about an inbox: the only thing it
 * produces is the draft string.
 */
import {
  action,
  computed,
  Default,
  NAME,
  pattern,
  UI,
  type VNode,
  Writable,
} from "commonfabric";

/** A titled block of the newsletter email. */
interface Section {
  heading: string;
  text: string;
}

/** The pieces of an email newsletter before it is assembled. */
interface ComposerInput {
  /** The email subject line readers see first. */
  subject?: Writable<string | Default<"This month at the studio">>;
  /** Greeting at the top of the email. */
  salutation?: Writable<string | Default<"Hello everyone,">>;
  /** Sections of the email body, in order. */
  sections?: Writable<Section[] | Default<[]>>;
}

/** An email newsletter draft, ready to copy into an email client. #newsletter #draft */
export interface ComposerOutput {
  [NAME]: string;
  [UI]: VNode;
  /** The whole email draft as plain text: subject, greeting and sections. */
  draft: string;
}

function assemble(subject: string, salutation: string, sections: Section[]) {
  const body = sections
    .map((s) => `## ${s.heading}\n\n${s.text}`)
    .join("\n\n");
  return `Subject: ${subject}\n\n${salutation}\n\n${body}\n`;
}

export default pattern<ComposerInput, ComposerOutput>(
  ({ subject, salutation, sections }) => {
    const heading = new Writable("");
    const text = new Writable("");

    const addSection = action(() => {
      if (!heading.get().trim()) return;
      sections.push({ heading: heading.get(), text: text.get() });
      heading.set("");
      text.set("");
    });

    const draft = computed(() =>
      assemble(subject.get(), salutation.get(), sections.get())
    );

    return {
      [NAME]: computed(() => `Newsletter: ${subject.get()}`),
      [UI]: (
        <cf-screen>
          <cf-input slot="header" $value={subject} placeholder="Email subject" />
          <cf-vstack gap="2" style="padding: 1rem;">
            <cf-input $value={salutation} />
            <cf-input $value={heading} placeholder="Section heading" />
            <cf-textarea $value={text} rows={4} />
            <cf-button onClick={addSection}>Add section</cf-button>
            <pre style="white-space: pre-wrap;">{draft}</pre>
          </cf-vstack>
        </cf-screen>
      ),
      draft,
    };
  },
);
