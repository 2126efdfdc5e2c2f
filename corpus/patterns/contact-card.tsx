import {
  computed,
  Default,
  ifElse,
  NAME,
  pattern,
  UI,
  type VNode,
  Writable,
} from "commonfabric";

/** The details kept for one person. */
interface ContactInput {
  /** Full name as the person writes it. */
  name: Writable<string | Default<"">>;
  /** Their email address, e.g. ada@example.org. */
  email: Writable<string | Default<"">>;
  /** A phone number in any format. */
  phone?: Writable<string | Default<"">>;
}

/** A card with someone's name, email address and phone number. #contact #person */
export interface ContactOutput {
  [NAME]: string;
  [UI]: VNode;
  /** Full name. */
  name: string;
  /** The email address, trimmed. */
  email: string;
  /** True when the email address looks well formed. */
  emailLooksValid: boolean;
}

/** A deliberately loose check: something@something.something */
export function looksLikeEmailAddress(value: string): boolean {
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value.trim());
}

function initials(name: string): string {
  return name
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 2)
    .map((part) => part[0].toUpperCase())
    .join("");
}

export default pattern<ContactInput, ContactOutput>(({ name, email, phone }) => {
  const emailLooksValid = computed(() => looksLikeEmailAddress(email.get()));
  const badge = computed(() => initials(name.get()) || "?");

  return {
    [NAME]: computed(() => name.get() || "New contact"),
    [UI]: (
      <cf-card style="padding: 1rem;">
        <cf-hstack gap="3" style="align-items: center;">
          <cf-avatar name={badge} />
          <cf-vstack gap="1" style="flex: 1;">
            <cf-input $value={name} placeholder="Name" />
            <cf-input type="email" $value={email} placeholder="Email address" />
            {ifElse(
              emailLooksValid,
              null,
              <small style="color: var(--cf-colors-red-600);">
                That email address does not look right.
              </small>,
            )}
            <cf-input type="tel" $value={phone} placeholder="Phone" />
          </cf-vstack>
        </cf-hstack>
      </cf-card>
    ),
    name,
    email: computed(() => email.get().trim()),
    emailLooksValid,
  };
});
