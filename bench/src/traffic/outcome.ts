/** What one request of the traffic came to, and what a set of them comes to. */
import type { OpName } from './operations';

export interface Outcome {
  op: OpName;
  /** 0 when no HTTP answer came: the connection failed, or the client gave up (`error` says). */
  status: number;
  /** Whether the answer was JSON (every answer of the API with a body should be). */
  json: boolean;
  startedAt: number;
  ms: number;
  /** The id it was sent with: what names it in the parts' logs. */
  requestId: string;
  error?: string;
  /** When no answer came: what the client's error said (its name, message and cause), to tell a reset from a cut body. */
  detail?: string;
}

export interface Summary {
  requests: number;
  byStatus: Record<string, number>;
  notJson: number;
  p50: number;
  p99: number;
  max: number;
}

/** Requests by status, how many answered without JSON, and the latency's p50, p99 and max. */
export function summarize(outcomes: readonly Outcome[]): Summary {
  const byStatus: Record<string, number> = {};
  for (const o of outcomes)
    byStatus[o.status || o.error || 'none'] = (byStatus[o.status || o.error || 'none'] ?? 0) + 1;
  const times = outcomes.map((o) => o.ms).sort((a, b) => a - b);
  const at = (q: number) => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? 0);
  return {
    requests: outcomes.length,
    byStatus,
    // 204 and 304 carry no body, so no type either.
    notJson: outcomes.filter((o) => o.status !== 0 && o.status !== 204 && o.status !== 304 && !o.json).length,
    p50: at(0.5),
    p99: at(0.99),
    max: at(1),
  };
}
