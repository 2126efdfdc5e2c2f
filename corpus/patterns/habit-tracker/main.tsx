import {
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
import {
  currentStreak,
  flames,
  type Habit,
  longestStreak,
  todayIso,
} from "./lib";

/** The habits being tracked. */
interface HabitTrackerInput {
  /** Each habit with the dates it was kept. */
  habits: Writable<Habit[] | Default<[]>>;
}

/** Daily habits with their current and best streaks. #habits #streaks */
export interface HabitTrackerOutput {
  [NAME]: string;
  [UI]: VNode;
  /** One row per habit with its streak figures. */
  summary: { name: string; current: number; best: number }[];
  /** Marks the named habit as done today. */
  checkIn: Stream<{ name: string }>;
  /** Starts tracking a new habit. */
  addHabit: Stream<{ name: string }>;
}

const markDone = handler<{ name: string }, { habits: Writable<Habit[]> }>(
  ({ name }, { habits }) => {
    const today = todayIso();
    habits.set(
      habits.get().map((h) =>
        h.name === name && !h.doneOn.includes(today)
          ? { ...h, doneOn: [...h.doneOn, today] }
          : h
      ),
    );
  },
);

const startHabit = handler<{ name: string }, { habits: Writable<Habit[]> }>(
  ({ name }, { habits }) => {
    const trimmed = name.trim();
    if (!trimmed || habits.get().some((h) => h.name === trimmed)) return;
    habits.push({ name: trimmed, doneOn: [] });
  },
);

export default pattern<HabitTrackerInput, HabitTrackerOutput>(({ habits }) => {
  const checkIn = markDone({ habits });
  const addHabit = startHabit({ habits });

  const summary = computed(() =>
    habits.get().map((h) => ({
      name: h.name,
      current: currentStreak(h.doneOn, todayIso()),
      best: longestStreak(h.doneOn),
    }))
  );

  return {
    [NAME]: computed(() => `Habits (${habits.get().length})`),
    [UI]: (
      <cf-screen>
        <cf-heading slot="header" level={4}>Habits</cf-heading>
        <cf-vstack gap="2" style="padding: 1rem;">
          {summary.map((row) => (
            <cf-hstack gap="2" style="align-items: center;">
              <span style="flex: 1;">{row.name} {flames(row.current)}</span>
              <span>{row.current} now · best {row.best}</span>
              <cf-button onClick={() => checkIn.send({ name: row.name })}>
                Done today
              </cf-button>
            </cf-hstack>
          ))}
        </cf-vstack>
        <cf-message-input
          slot="footer"
          placeholder="A new habit..."
          oncf-send={(e: { detail?: { message?: string } }) =>
            addHabit.send({ name: e.detail?.message ?? "" })}
        />
      </cf-screen>
    ),
    summary,
    checkIn,
    addHabit,
  };
});
