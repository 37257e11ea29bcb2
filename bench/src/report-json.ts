/** The whole run's report, as the scenarios build it and the table reads it back. */
import { round } from './stats';

// biome-ignore lint/suspicious/noExplicitAny: the report is plain JSON built by the scenarios
export type Report = Record<string, any>;

/** A row of the report's main table: scenario, measured, ratio, goal. */
export type Row = [string, string, string, string];

/** A ratio of two figures, to three decimals. */
export const ratio = (a = 0, b = 1) => round(a / b, 3);
