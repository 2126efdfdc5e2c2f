import {
  computed,
  Default,
  NAME,
  pattern,
  str,
  UI,
  type VNode,
  Writable,
} from "commonfabric";

/** Who the card is for and what it celebrates. */
interface GreetingCardInput {
  /** The person receiving the card. */
  recipient?: Writable<string | Default<"friend">>;
  /** The occasion, such as "birthday" or "new job". */
  occasion?: Writable<string | Default<"birthday">>;
  /** Who signs the card. */
  sender?: Writable<string | Default<"">>;
}

/** A short greeting card with a generated message. #greeting #card */
export interface GreetingCardOutput {
  [NAME]: string;
  [UI]: VNode;
  /** The finished message printed inside the card. */
  message: string;
}

const OPENERS: Record<string, string> = {
  birthday: "Happy birthday",
  "new job": "Congratulations on the new job",
  wedding: "Warmest wishes on your wedding day",
  graduation: "Well done on graduating",
};

function compose(recipient: string, occasion: string, sender: string) {
  const opener = OPENERS[occasion.toLowerCase()] ?? `Happy ${occasion}`;
  const signature = sender ? `\n— ${sender}` : "";
  return `${opener}, ${recipient}!${signature}`;
}

export default pattern<GreetingCardInput, GreetingCardOutput>(
  ({ recipient, occasion, sender }) => {
    const message = computed(() =>
      compose(recipient.get(), occasion.get(), sender.get())
    );

    return {
      [NAME]: str`Card for ${recipient}`,
      [UI]: (
        <cf-vstack gap="3" style="padding: 1rem;">
          <cf-hstack gap="2">
            <cf-input $value={recipient} placeholder="To" />
            <cf-input $value={occasion} placeholder="Occasion" />
            <cf-input $value={sender} placeholder="From" />
          </cf-hstack>
          <cf-card style="padding: 2rem; text-align: center; white-space: pre-line;">
            {message}
          </cf-card>
        </cf-vstack>
      ),
      message,
    };
  },
);
