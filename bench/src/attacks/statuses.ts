/** What a paced result's statuses say: how many succeeded, their share, and a list of them. */
import type { PacedResult } from '../paced-spec';
import { round } from '../stats';

/** Answers of a paced result that were 2xx. */
export const okCount = (r: PacedResult | undefined) =>
  Object.entries(r?.statuses ?? {}).reduce((n, [status, c]) => n + (/^2/.test(status) ? c : 0), 0);
export const percentOf = (ok: number, all: number) => (all ? round((ok / all) * 100, 2) : 0);

/** The statuses a paced result was answered, 200, 429 and 503 first. */
export const statusList = (statuses: Record<string, number>) =>
  [
    '200',
    '429',
    '503',
    ...Object.keys(statuses)
      .filter((s) => !['200', '429', '503'].includes(s))
      .sort(),
  ]
    .map((s) => `${s}: ${statuses[s] ?? 0}`)
    .join(', ');
