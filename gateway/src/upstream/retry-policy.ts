/**
 * Which failed attempts are sent again, and when. A request that never reached the service
 * (`notDelivered`: it is restarting or being replaced, or the connection did not open within its
 * bound, connection-pool.ts) is sent again within the upstream's retry window (@cs/lifecycle),
 * for every method, since its body is held (request-body.ts). A connection reset before any
 * answer is sent again once, at once, for idempotent methods only: a kept-alive socket the
 * service was closing, or a new one still queued when a replica closed its listener to drain.
 * Nothing else is retried.
 */
import { notDelivered } from '@cs/errors';
import type { RetryWindow } from '@cs/lifecycle';

/** Methods whose repetition changes nothing more than the first time (RFC 9110 §9.2.2). */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

export interface FailedAttempt {
  method: string;
  /** Which attempt failed, from 1. */
  attempt: number;
  /** When the first attempt began (ms since the epoch). */
  firstAt: number;
  error: NodeJS.ErrnoException;
}

/** The pause before the next attempt, or undefined: the failure is the answer. */
export function retryDelay(
  window: RetryWindow,
  { method, attempt, firstAt, error }: FailedAttempt,
): number | undefined {
  if (notDelivered(error)) return window.nextDelay(attempt, firstAt);
  const reset = error.code === 'ECONNRESET' || error.code === 'EPIPE';
  return reset && attempt === 1 && IDEMPOTENT.has(method) ? 0 : undefined;
}
