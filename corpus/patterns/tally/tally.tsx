import {
  action,
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

/** Arguments for a tally. Every field is optional, so `<Tally />` works bare. */
interface TallyInput {
  /** The current count. Starts at zero when nothing is passed in. */
  value?: Writable<number | Default<0>>;
  /** How much one press of a button adds or removes. */
  step?: number | Default<1>;
}

/** A running tally with plus and minus buttons. #counter #tally */
export interface TallyOutput {
  [NAME]: string;
  [UI]: VNode;
  /** The count as it stands now. */
  value: number;
  /** Adds one step to the count. */
  increment: Stream<void>;
  /** Removes one step from the count. */
  decrement: Stream<void>;
}

/** Moves a tally by a fixed amount; bound once per direction. */
const nudge = handler<void, { value: Writable<number>; by: number }>(
  (_, { value, by }) => {
    value.set((value.get() ?? 0) + by);
  },
);

/** Words for small numbers, digits for everything else. */
function spell(n: number): string {
  const words = ["zero", "one", "two", "three", "four", "five"];
  return n >= 0 && n < words.length ? words[n] : String(n);
}

const Tally = pattern<TallyInput, TallyOutput>(({ value, step }) => {
  const increment = nudge({ value, by: step });

  // Single-use logic lives in the body as an action.
  const decrement = action(() => {
    value.set(value.get() - step);
  });

  const reset = action(() => value.set(0));

  const label = computed(() => `Tally (${spell(value.get())})`);

  return {
    [NAME]: label,
    [UI]: (
      <cf-screen>
        <cf-heading slot="header" level={4}>Tally</cf-heading>
        <cf-vstack gap="3" style="padding: 1.5rem; align-items: center;">
          <span style={{ fontSize: "2.5rem", fontWeight: "600" }}>{value}</span>
          <cf-hstack gap="2">
            <cf-button variant="secondary" onClick={decrement}>−</cf-button>
            <cf-button variant="primary" onClick={increment}>+</cf-button>
            <cf-button variant="ghost" onClick={reset}>Reset</cf-button>
          </cf-hstack>
        </cf-vstack>
      </cf-screen>
    ),
    value,
    increment,
    decrement,
  };
});

export default Tally;
