/** Text helpers for showing recipes. */
import type { Ingredient, Recipe, RecipeFilter } from "./types";

/** "1 h 15 min", "40 min". */
export function formatDuration(minutes: number): string {
  if (minutes < 60) return `${minutes} min`;
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return m ? `${h} h ${m} min` : `${h} h`;
}

/** Scales an ingredient from the recipe's servings to `servings`. */
export function scaleIngredient(
  item: Ingredient,
  from: number,
  to: number,
): Ingredient {
  const factor = from > 0 ? to / from : 1;
  return { ...item, quantity: Math.round(item.quantity * factor * 10) / 10 };
}

/** "200 g plain flour", "2 eggs". */
export function describeIngredient(item: Ingredient): string {
  const unit = item.unit ? `${item.unit} ` : "";
  return `${item.quantity} ${unit}${item.name}`;
}

export function matchesFilter(recipe: Recipe, filter: RecipeFilter): boolean {
  const tagOk = !filter.tag || recipe.tags.includes(filter.tag);
  const timeOk = !filter.maxMinutes || recipe.minutes <= filter.maxMinutes;
  return tagOk && timeOk;
}

/** A one-line card summary. A default export that is not a pattern. */
export default function summarize(recipe: Recipe): string {
  return `${recipe.title} · serves ${recipe.serves} · ${
    formatDuration(recipe.minutes)
  }`;
}
