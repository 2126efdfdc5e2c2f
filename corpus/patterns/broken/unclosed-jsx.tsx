/**
 * DELIBERATELY BROKEN: the <cf-vstack> in the view below is never closed.
 * Kept so indexers can show they recover the declarations that come before
 * a syntax error and report the file instead of failing the whole run.
 */
import { computed, Default, NAME, pattern, UI, type VNode } from "commonfabric";

/** A shelf of plant care reminders. */
interface PlantShelfInput {
  /** Plant names, one per pot. */
  plants: string[] | Default<[]>;
  /** Days between waterings. */
  everyDays?: number | Default<3>;
}

/** Which plants need water today. #plants */
export interface PlantShelfOutput {
  [NAME]: string;
  [UI]: VNode;
  thirsty: string[];
}

/** Every `everyDays`-th day counting from the start of the year. */
export function needsWater(dayOfYear: number, everyDays: number): boolean {
  return everyDays > 0 && dayOfYear % everyDays === 0;
}

export function potLabel(name: string, index: number): string {
  return `#${index + 1} ${name}`;
}

export default pattern<PlantShelfInput, PlantShelfOutput>(
  ({ plants, everyDays }) => {
    const thirsty = computed(() =>
      needsWater(new Date().getDate(), everyDays) ? plants : []
    );

    return {
      [NAME]: "Plant shelf",
      [UI]: (
        <cf-vstack gap="1">
          {thirsty.map((p, i) => <div>{potLabel(p, i)}</div>)}
          <cf-hstack gap="2">
            <span>Water today</span>
          </cf-hstack>
      ),
      thirsty,
    };
  },
);
