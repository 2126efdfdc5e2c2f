/**
 * Email template picker: choose a ready-made email template (thank-you,
 * follow-up, out-of-office) and copy its subject and body. It sends no email
 * and reads no inbox; it only hands back the chosen template's text.
 */
import { computed, Default, NAME, pattern, UI, type VNode, Writable } from "commonfabric";

/** The templates on offer. */
const TEMPLATES = {
  thanks: { subject: "Thank you", body: "Thanks so much for your help today." },
  followUp: { subject: "Following up", body: "I wanted to follow up on my last email." },
  away: { subject: "Out of office", body: "I am away and will reply when I am back." },
};

interface EmailTemplatesInput {
  /** Which template is chosen: thanks, followUp or away. */
  chosen?: Writable<string | Default<"thanks">>;
}

/** Pick an email template and copy its text. #email #templates */
export interface EmailTemplatesOutput {
  [NAME]: string;
  [UI]: VNode;
  /** Subject line of the chosen email template. */
  subject: string;
  /** Body text of the chosen email template. */
  body: string;
}

export default pattern<EmailTemplatesInput, EmailTemplatesOutput>(({ chosen }) => {
  const template = computed(() => TEMPLATES[chosen.get() as keyof typeof TEMPLATES] ?? TEMPLATES.thanks);
  const subject = computed(() => template.subject);
  const body = computed(() => template.body);
  return {
    [NAME]: "Email templates",
    [UI]: (
      <cf-vstack gap="2" style="padding: 1rem;">
        <cf-select $value={chosen}>
          <option value="thanks">Thank you</option>
          <option value="followUp">Follow-up</option>
          <option value="away">Out of office</option>
        </cf-select>
        <strong>{subject}</strong>
        <p>{body}</p>
      </cf-vstack>
    ),
    subject,
    body,
  };
});
