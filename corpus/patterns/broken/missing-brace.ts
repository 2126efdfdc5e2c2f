/**
 * DELIBERATELY BROKEN: `splitEvenly` below never closes its body, so
 * the file does not parse. The declarations before it are intact.
 */
import { computed, Default, NAME, pattern } from "commonfabric";

/** A bill to divide. */
export interface BillInput {
  /** Total to pay, tip excluded. */
  amount: number | Default<0>;
  /** How many people pay. */
  diners: number | Default<2>;
  /** Tip as a percentage of the amount. */
  tipPercent?: number | Default<10>;
}

/** Each diner's share of a bill. #bill */
export interface BillOutput {
  [NAME]: string;
  perPerson: number;
}

export function withTip(amount: number, tipPercent: number): number {
  return amount * (1 + tipPercent / 100);
}

export function roundUpToCents(value: number): number {
  return Math.ceil(value * 100) / 100;
}

export function splitEvenly(total: number, diners: number): number {
  if (diners <= 0) {
    return total;
  }
  return roundUpToCents(total / diners);

export default pattern<BillInput, BillOutput>(({ amount, diners, tipPercent }) => {
  const perPerson = computed(() =>
    splitEvenly(withTip(amount, tipPercent), diners)
  );
  return { [NAME]: "Bill splitter", perPerson };
});
