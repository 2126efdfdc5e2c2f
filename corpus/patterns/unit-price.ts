/**
 * Compares two package sizes at the shop and says which is cheaper per unit.
 * A pattern without a view: other patterns read its outputs.
 */
import { computed, Default, NAME, pattern } from "commonfabric";

/** One package on the shelf. */
export interface Offer {
  /** Shelf price in the local currency. */
  price: number;
  /** Amount in the package, in whatever unit both offers share. */
  amount: number;
}

/** Two offers to compare. */
interface UnitPriceInput {
  /** The first package. */
  left: Offer | Default<{ price: 0; amount: 1 }>;
  /** The second package. */
  right: Offer | Default<{ price: 0; amount: 1 }>;
}

/** Which of two packages is the better deal. #shopping #unitPrice */
export interface UnitPriceOutput {
  [NAME]: string;
  /** Price per unit of the left package. */
  leftPerUnit: number;
  /** Price per unit of the right package. */
  rightPerUnit: number;
  /** "left", "right" or "same". */
  cheaper: string;
}

export function perUnit(offer: Offer): number {
  if (!offer || offer.amount <= 0) return Number.POSITIVE_INFINITY;
  return Math.round((offer.price / offer.amount) * 1000) / 1000;
}

function pickCheaper(a: number, b: number): string {
  if (Math.abs(a - b) < 0.0005) return "same";
  return a < b ? "left" : "right";
}

export default pattern<UnitPriceInput, UnitPriceOutput>(({ left, right }) => {
  const leftPerUnit = computed(() => perUnit(left));
  const rightPerUnit = computed(() => perUnit(right));
  const cheaper = computed(() => pickCheaper(leftPerUnit, rightPerUnit));

  return {
    [NAME]: computed(() =>
      cheaper === "same" ? "Same price per unit" : `The ${cheaper} one is cheaper`
    ),
    leftPerUnit,
    rightPerUnit,
    cheaper,
  };
});
