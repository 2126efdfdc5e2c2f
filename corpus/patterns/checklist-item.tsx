import {
  action,
  computed,
  Default,
  NAME,
  pattern,
  Stream,
  UI,
  type VNode,
  Writable,
} from "commonfabric";

/** One line of a checklist: a label and whether it is done. */
interface ChecklistItemInput {
  /** What needs doing, in a few words. */
  label: Writable<Default<string, "New item">>;
  /** Ticked once the thing is done. */
  done: Writable<Default<boolean, false>>;
  /** Optional due date as YYYY-MM-DD; empty means no deadline. */
  due?: Default<string, "">;
}

/** A single checklist entry that can be ticked off. #todo #checklistItem */
export interface ChecklistItemOutput {
  [NAME]: string;
  [UI]: VNode;
  /** The text of the item. */
  label: string;
  /** Whether the item is finished. */
  done: boolean;
  /** Flips the done flag. */
  toggle: Stream<void>;
}

function dueLabel(due: string | undefined): string {
  if (!due) return "";
  const [year, month, day] = due.split("-");
  return day && month ? `due ${day}/${month}` : `due ${year}`;
}

const ChecklistItem = pattern<ChecklistItemInput, ChecklistItemOutput>(
  ({ label, done, due }) => {
    const toggle = action(() => done.set(!done.get()));
    const title = computed(() => (done.get() ? "✔ " : "☐ ") + label.get());
    const dueText = computed(() => dueLabel(due));

    return {
      [NAME]: title,
      [UI]: (
        <cf-hstack gap="2" style="align-items: center; padding: 0.25rem 0;">
          <cf-checkbox $checked={done} />
          <cf-input $value={label} style="flex: 1;" />
          <span style={{ fontSize: "0.8rem", opacity: 0.7 }}>{dueText}</span>
          <cf-button variant="ghost" onClick={toggle}>
            {done ? "Undo" : "Done"}
          </cf-button>
        </cf-hstack>
      ),
      label,
      done,
      toggle,
    };
  },
);

export default ChecklistItem;
