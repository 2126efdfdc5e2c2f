import {
  action,
  computed,
  Default,
  NAME,
  pattern,
  UI,
  type VNode,
  Writable,
} from "commonfabric";
import type { Recipe, RecipeFilter } from "./types";
import summarize, {
  describeIngredient,
  matchesFilter,
  scaleIngredient,
} from "./format";

/** The recipes kept in the box and how they are being browsed. */
interface RecipeBoxInput {
  /** Every recipe in the box. */
  recipes: Writable<Recipe[] | Default<[]>>;
  /** Current browse filter. */
  filter?: Writable<RecipeFilter | Default<{ tag: ""; maxMinutes: 0 }>>;
  /** How many people the open recipe should be scaled for. */
  servings?: Writable<number | Default<2>>;
}

/** A box of recipes you can filter and scale. #recipes #cooking */
export interface RecipeBoxOutput {
  [NAME]: string;
  [UI]: VNode;
  /** The recipes that pass the filter. */
  visible: Recipe[];
  /** Every tag used by any recipe, sorted. */
  tags: string[];
}

export default pattern<RecipeBoxInput, RecipeBoxOutput>(
  ({ recipes, filter, servings }) => {
    const openIndex = new Writable(-1);

    const visible = computed(() =>
      recipes.get().filter((r) => matchesFilter(r, filter.get()))
    );
    const tags = computed(() =>
      [...new Set(recipes.get().flatMap((r) => r.tags))].sort()
    );
    const opened = computed(() => visible[openIndex.get()]);
    const shoppingLines = computed(() =>
      (opened?.ingredients ?? []).map((i) =>
        describeIngredient(scaleIngredient(i, opened.serves, servings.get()))
      )
    );

    const closeRecipe = action(() => openIndex.set(-1));

    return {
      [NAME]: computed(() => `Recipe box (${recipes.get().length})`),
      [UI]: (
        <cf-screen>
          <cf-hstack slot="header" gap="2">
            <cf-select
              $value={filter.key("tag")}
              items={tags.map((t) => ({ label: t, value: t }))}
            />
            <cf-input type="number" $value={servings} />
          </cf-hstack>
          <cf-vstack gap="1" style="padding: 1rem;">
            {visible.map((recipe, i) => (
              <cf-button variant="ghost" onClick={() => openIndex.set(i)}>
                {summarize(recipe)}
              </cf-button>
            ))}
            <cf-card>
              {shoppingLines.map((line) => <div>{line}</div>)}
              <cf-button variant="secondary" onClick={closeRecipe}>
                Close
              </cf-button>
            </cf-card>
          </cf-vstack>
        </cf-screen>
      ),
      visible,
      tags,
    };
  },
);
