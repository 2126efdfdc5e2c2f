/**
 * Morning dashboard: three clocks and a quote. Shows both ways to compose:
 * the clocks are rendered as JSX tags, the quote card is called as a
 * function and its result placed in the tree.
 */
import {
  computed,
  Default,
  NAME,
  pattern,
  UI,
  type VNode,
  Writable,
} from "commonfabric";
import WorldClock from "./world-clock.tsx";
import { type Quote, QuoteCard } from "./quote-card";

/** What the dashboard shows. */
interface DashboardInput {
  /** The current moment as epoch ms, refreshed by whoever hosts the board. */
  now: Writable<number | Default<0>>;
  /** Quotes to rotate through, one per day. */
  quotes?: Quote[] | Default<[]>;
  /** Your own name for the greeting line. */
  owner?: string | Default<"there">;
}

/** A start-of-day overview with clocks and a quote. #dashboard #morning */
export interface DashboardOutput {
  [NAME]: string;
  [UI]: VNode;
  /** Day of the year, used to rotate the quote. */
  dayOfYear: number;
}

function dayOfYearFrom(epochMs: number): number {
  const d = new Date(epochMs);
  const start = Date.UTC(d.getUTCFullYear(), 0, 1);
  return Math.floor((epochMs - start) / 86_400_000) + 1;
}

export default pattern<DashboardInput, DashboardOutput>(
  ({ now, quotes, owner }) => {
    const dayOfYear = computed(() => dayOfYearFrom(now.get()));
    const quote = QuoteCard({ quotes, seed: dayOfYear });

    return {
      [NAME]: computed(() => `Good morning, ${owner}`),
      [UI]: (
        <cf-screen>
          <cf-heading slot="header" level={3}>
            Good morning, {owner}
          </cf-heading>
          <cf-vstack gap="4" style="padding: 1rem;">
            <cf-hstack gap="2">
              <WorldClock label="UTC" now={now} />
              <WorldClock label="New York" offsetMinutes={-300} now={now} />
              <WorldClock label="Singapore" offsetMinutes={480} now={now} />
            </cf-hstack>
            {quote}
          </cf-vstack>
        </cf-screen>
      ),
      dayOfYear,
    };
  },
);
