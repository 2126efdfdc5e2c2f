/** Shared shapes for the recipe box. No pattern lives here. */

/** One line of an ingredient list. */
export interface Ingredient {
  /** What to use, e.g. "plain flour". */
  name: string;
  /** How much, in `unit`s. */
  quantity: number;
  /** "g", "ml", "tbsp", or "" for whole items. */
  unit: string;
}

/** A recipe as stored in the box. */
export interface Recipe {
  /** The dish's name. */
  title: string;
  /** Servings the quantities are written for. */
  serves: number;
  /** Preparation plus cooking time, in minutes. */
  minutes: number;
  /** Free-form tags such as "vegetarian" or "weeknight". */
  tags: string[];
  ingredients: Ingredient[];
  /** Steps, in order. */
  steps: string[];
}

/** Filters the box applies when listing recipes. */
export type RecipeFilter = {
  /** Only recipes carrying this tag; empty means all. */
  tag: string;
  /** Only recipes at or under this many minutes; 0 means no limit. */
  maxMinutes: number;
};
