/**
 * At most `limit` actions per key in a window of `windowMs`, counted in this process's memory;
 * past it, 429 with Retry-After (the seconds until the key's window ends). For limits only a
 * service can count, because only it knows what a request does or whom it concerns: a session's
 * refreshes, an account's changes to what everyone sees. The gateway's limits count per address.
 *
 * A fixed window per key, opened by the key's first action. At most `maxKeys` keys, the oldest
 * window forgotten first: a bound on memory, not a security decision. Each replica counts its
 * own, so behind N replicas a key gets up to N times the limit.
 */
import { HttpError, messages } from '@cs/errors';

export interface WindowLimitOptions {
  /** Actions per window and key; 0: no limit. */
  limit: number;
  windowMs: number;
  maxKeys?: number;
  now?: () => number;
}

export interface WindowLimit {
  /** Counts one action of `key`; throws 429 past the limit. */
  take(key: string): void;
}

export function createWindowLimit({
  limit,
  windowMs,
  maxKeys = 100_000,
  now = Date.now,
}: WindowLimitOptions): WindowLimit {
  /** Key → the start of its window and the actions in it; Map order: oldest window first. */
  const windows = new Map<string, { startedAt: number; count: number }>();
  return {
    take(key) {
      if (limit <= 0) return;
      const at = now();
      let window = windows.get(key);
      if (!window || at - window.startedAt >= windowMs) {
        windows.delete(key);
        window = { startedAt: at, count: 0 };
        windows.set(key, window);
        for (const oldest of windows.keys()) {
          if (windows.size <= maxKeys) break;
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
