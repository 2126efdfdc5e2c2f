import {
  computed,
  Default,
  fetchJson,
  ifElse,
  NAME,
  pattern,
  UI,
  type VNode,
  Writable,
} from "commonfabric";
import type { ForecastResponse, HourlyPoint } from "./forecast-api";

/** Where to look up the weather. */
interface WeatherInput {
  /** Latitude in decimal degrees. */
  latitude: Writable<Default<number, 52.52>>;
  /** Longitude in decimal degrees. */
  longitude: Writable<Default<number, 13.41>>;
  /** How many upcoming hours to list. */
  hours?: Default<number, 6>;
}

/** The next few hours of weather at one place. #weather #forecast */
export interface WeatherOutput {
  [NAME]: string;
  [UI]: VNode;
  /** The upcoming hours, soonest first. */
  upcoming: HourlyPoint[];
  /** True when any listed hour has a rain chance of 50% or more. */
  bringUmbrella: boolean;
}

function forecastUrl(lat: number, lon: number): string {
  return `https://forecast.example.net/v1/hourly?lat=${lat}&lon=${lon}`;
}

export default pattern<WeatherInput, WeatherOutput>(
  ({ latitude, longitude, hours }) => {
    const url = computed(() => forecastUrl(latitude.get(), longitude.get()));
    const forecast = fetchJson<ForecastResponse>({ url });

    const upcoming = computed(() =>
      (forecast.result?.hourly ?? []).slice(0, hours)
    );
    const bringUmbrella = computed(() =>
      upcoming.some((h) => h.rainChance >= 50)
    );

    return {
      [NAME]: computed(() =>
        bringUmbrella ? "Weather: rain likely" : "Weather: looks dry"
      ),
      [UI]: (
        <cf-vstack gap="2" style="padding: 1rem;">
          <cf-hstack gap="2">
            <cf-input type="number" $value={latitude} />
            <cf-input type="number" $value={longitude} />
          </cf-hstack>
          {ifElse(
            forecast.pending,
            <span>Checking the sky…</span>,
            <table>
              {upcoming.map((h) => (
                <tr>
                  <td>{h.time.slice(11, 16)}</td>
                  <td>{h.temperature}°C</td>
                  <td>{h.rainChance}% rain</td>
                </tr>
              ))}
            </table>,
          )}
          {ifElse(bringUmbrella, <cf-badge>☂ Take an umbrella</cf-badge>, null)}
        </cf-vstack>
      ),
      upcoming,
      bringUmbrella,
    };
  },
);
