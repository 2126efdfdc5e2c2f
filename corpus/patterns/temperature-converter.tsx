import {
  computed,
  Default,
  handler,
  ifElse,
  NAME,
  pattern,
  Stream,
  UI,
  type VNode,
  Writable,
} from "commonfabric";

/** Inputs for converting between Celsius and Fahrenheit. */
interface ConverterInput {
  /** The reading in degrees Celsius. */
  celsius: Writable<Default<number, 20>>;
  /** Digits kept after the decimal point when showing Fahrenheit. */
  precision?: Default<number, 1>;
}

/** Converts a temperature reading between scales. #converter #temperature */
export interface ConverterOutput {
  [NAME]: string;
  [UI]: VNode;
  /** The reading in Celsius. */
  celsius: number;
  /** The same reading in Fahrenheit, rounded to `precision` digits. */
  fahrenheit: number;
  /** Sets the reading from a Fahrenheit value. */
  setFahrenheit: Stream<{ degrees: number }>;
}

export function toFahrenheit(c: number): number {
  return (c * 9) / 5 + 32;
}

export function toCelsius(f: number): number {
  return ((f - 32) * 5) / 9;
}

/** Accepts a Fahrenheit value from outside and stores it as Celsius. */
const fromFahrenheit = handler<
  { degrees: number },
  { celsius: Writable<number> }
>(({ degrees }, { celsius }) => {
  celsius.set(Math.round(toCelsius(degrees) * 100) / 100);
});

export default pattern<ConverterInput, ConverterOutput>(
  ({ celsius, precision }) => {
    const fahrenheit = computed(() => {
      const factor = 10 ** (precision ?? 1);
      return Math.round(toFahrenheit(celsius.get()) * factor) / factor;
    });
    const freezing = computed(() => celsius.get() <= 0);

    return {
      [NAME]: computed(() => `${celsius.get()}°C / ${fahrenheit}°F`),
      [UI]: (
        <cf-vstack gap="2" style="padding: 1rem; max-width: 20rem;">
          <cf-field label="Celsius">
            <cf-input type="number" $value={celsius} />
          </cf-field>
          <p>
            That is <strong>{fahrenheit}</strong> °F.
          </p>
          {ifElse(freezing, <cf-badge>Below freezing</cf-badge>, null)}
        </cf-vstack>
      ),
      celsius,
      fahrenheit,
      setFahrenheit: fromFahrenheit({ celsius }),
    };
  },
);
