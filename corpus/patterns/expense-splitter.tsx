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

/** Money one person laid out for the group. */
export interface Expense {
  payer: string;
  amount: number;
  note: string;
}

/** The people sharing costs and what has been spent so far. */
interface SplitterInput {
  /** Everyone who shares the costs equally. */
  people: Writable<string[] | Default<["Ana", "Bo"]>>;
  /** Every expense recorded, oldest first. */
  expenses: Writable<Expense[] | Default<[]>>;
}

/** Shared costs and who owes whom. #expenses #money */
export interface SplitterOutput {
  [NAME]: string;
  [UI]: VNode;
  /** Sum of all expenses. */
  total: number;
  /** Net balance per person: positive means they are owed money. */
  balances: { person: string; net: number }[];
  /** Records a new expense. */
  addExpense: Stream<{ payer: string; amount: number; note?: string }>;
  /** Removes the expense at the given position. */
  removeExpense: Stream<{ index: number }>;
}

/** Event: a new expense; context: the list it is appended to. */
const recordExpense = handler<
  { payer: string; amount: number; note?: string },
  { expenses: Writable<Expense[]> }
>(({ payer, amount, note }, { expenses }) => {
  if (!payer || !(amount > 0)) return;
  expenses.push({ payer, amount, note: note ?? "" });
});

/** Event: which row to drop; context: the list to drop it from. */
const dropExpense = handler<{ index: number }, { expenses: Writable<Expense[]> }>(
  ({ index }, { expenses }) => {
    expenses.set(expenses.get().filter((_, i) => i !== index));
  },
);

export function settle(people: string[], expenses: Expense[]) {
  const total = expenses.reduce((sum, e) => sum + e.amount, 0);
  const share = people.length ? total / people.length : 0;
  return people.map((person) => {
    const paid = expenses
      .filter((e) => e.payer === person)
      .reduce((sum, e) => sum + e.amount, 0);
    return { person, net: Math.round((paid - share) * 100) / 100 };
  });
}

export default pattern<SplitterInput, SplitterOutput>(({ people, expenses }) => {
  const draftPayer = new Writable("");
  const draftAmount = new Writable(0);

  const addExpense = recordExpense({ expenses });
  const removeExpense = dropExpense({ expenses });

  const submitDraft = action(() => {
    addExpense.send({ payer: draftPayer.get(), amount: draftAmount.get() });
    draftAmount.set(0);
  });

  const total = computed(() =>
    expenses.get().reduce((sum, e) => sum + e.amount, 0)
  );
  const balances = computed(() => settle(people.get(), expenses.get()));

  return {
    [NAME]: computed(() => `Shared costs: ${total}`),
    [UI]: (
      <cf-vstack gap="2" style="padding: 1rem;">
        {expenses.map((e, index) => (
          <cf-hstack gap="2">
            <span style="flex: 1;">{e.payer}: {e.amount} {e.note}</span>
            <cf-button variant="ghost" onClick={() => removeExpense.send({ index })}>
              ✕
            </cf-button>
          </cf-hstack>
        ))}
        <cf-hstack gap="2">
          <cf-input $value={draftPayer} placeholder="Who paid" />
          <cf-input type="number" $value={draftAmount} />
          <cf-button onClick={submitDraft}>Add</cf-button>
        </cf-hstack>
        {balances.map((b) => <div>{b.person}: {b.net}</div>)}
      </cf-vstack>
    ),
    total,
    balances,
    addExpense,
    removeExpense,
  };
});
