/**
 * Declarations for the forecast service's JSON. Types only; there is no
 * runtime module beside this file, so "./forecast-api" resolves here.
 */

/** One hour of the hourly forecast. */
export interface HourlyPoint {
  /** ISO timestamp of the hour. */
  time: string;
  /** Air temperature in °C. */
  temperature: number;
  /** Chance of rain, 0–100. */
  rainChance: number;
}

/** The forecast endpoint's response body. */
export interface ForecastResponse {
  latitude: number;
  longitude: number;
  hourly: HourlyPoint[];
}

export declare const FORECAST_BASE: string;

/** One day of the daily summary endpoint. */
export interface DailySummary {
  /** The date, YYYY-MM-DD. */
  date: string;
  /** Lowest and highest temperature in °C. */
  min: number;
  max: number;
  /** Total expected rain in millimetres. */
  rainMm: number;
}

/** Builds a request URL for the given coordinates. */
export declare function forecastUrl(lat: number, lon: number): string;
