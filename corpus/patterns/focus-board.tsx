/**
 * Focus board: a pinned focus timer next to whatever to-do list you already
 * keep. The timer is imported by content hash so the board always runs the
 * exact timer version it was written against.
 */
import {
  computed,
  NAME,
  pattern,
  UI,
  type VNode,
  wish,
} from "commonfabric";
import FocusTimer from "cf:pattern:Zt3kQ9mW2xLp8rVb4nHc7sYd1fGj6uKe0aTo5qNiXw_";

/** The narrow slice of a to-do piece this board reads. */
type TodoLike = {
  items?: { title: string; done: boolean }[];
};

/** Takes nothing: the list is found by wishing for it. */
type FocusBoardInput = Record<string, never>;

/** A work session view pairing a timer with your open to-dos. #focus #dashboard */
export interface FocusBoardOutput {
  [NAME]: string;
  [UI]: VNode;
  /** Titles of to-dos not yet done. */
  openTasks: string[];
}

export default pattern<FocusBoardInput, FocusBoardOutput>(() => {
  const todos = wish<TodoLike>({ query: "#todo" });
  const timer = FocusTimer({ minutes: 25 });

  const openTasks = computed(() =>
    (todos.result?.items ?? [])
      .filter((item) => !item.done)
      .map((item) => item.title)
  );
  const summary = computed(() => `${openTasks.length} open`);

  return {
    [NAME]: computed(() => `Focus (${summary})`),
    [UI]: (
      <cf-screen>
        <cf-heading slot="header" level={4}>Focus</cf-heading>
        <cf-hstack gap="4" style="padding: 1rem; align-items: flex-start;">
          <cf-card style="flex: 1;">{timer}</cf-card>
          <cf-vstack gap="1" style="flex: 2;">
            <strong>{summary}</strong>
            {openTasks.map((title) => <div>• {title}</div>)}
            {todos}
          </cf-vstack>
        </cf-hstack>
      </cf-screen>
    ),
    openTasks,
  };
});
