/**
 * Refreshes per session: at most LIMIT in a window of WINDOW_MS, counted by identity (the gateway
 * does not read bodies, and knows no session). A client refreshes about once an access token's
 * lifetime, per tab, and a retry or a second tab within the grace interval counts too; far more
 * is a loop or a stolen token being tried, and costs the database on every call. Past the limit:
 * 429 with Retry-After, before the session is read.
 *
 * In this process's memory, at most MAX_SESSIONS, the oldest forgotten first: a bound on cost, not
 * a security decision (a refresh token is 256 random bits). Each identity replica counts its own,
 * so behind N replicas a session gets up to N times the limit.
 */
import { HttpError, messages } from '@cs/errors';

export const REFRESH_LIMIT = 30;
export const REFRESH_WINDOW_MS = 60_000;
const MAX_SESSIONS = 100_000;

export function createRefreshLimit({ limit = REFRESH_LIMIT, windowMs = REFRESH_WINDOW_MS, now = Date.now } = {}) {
  /** Session id → the start of its window and the refreshes in it; Map order: oldest window first. */
  const windows = new Map<string, { startedAt: number; count: number }>();
  return {
    /** Counts one refresh of `sessionId`; throws 429 past the limit. */
    take(sessionId: string): void {
      const at = now();
      let window = windows.get(sessionId);
      if (!window || at - window.startedAt >= windowMs) {
        windows.delete(sessionId);
        window = { startedAt: at, count: 0 };
        windows.set(sessionId, window);
        for (const oldest of windows.keys()) {
          if (windows.size <= MAX_SESSIONS) break;
          windows.delete(oldest);
        }
      }
      window.count += 1;
      if (window.count > limit) {
        const retryAfter = Math.max(1, Math.ceil((window.startedAt + windowMs - at) / 1000));
        throw new HttpError(429, messages.tooManyRequests, { headers: { 'Retry-After': String(retryAfter) } });
      }
    },
  };
}

export type RefreshLimit = ReturnType<typeof createRefreshLimit>;
