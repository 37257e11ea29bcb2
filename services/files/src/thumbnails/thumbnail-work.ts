/**
 * How thumbnails are made without taking the service down: at most `workers` at once (a bulkhead,
 * `@cs/koa` bulkhead.ts, whose line is served fairly, one account's piece after another's), and a
 * request that waits longer than `maxWaitMs` for a worker gets 503 with Retry-After rather than
 * hang. Requests for one thumbnail while it is being made share that one making (single flight):
 * a burst of readers of a new image costs one decode, not one each.
 */
import { createBulkhead } from '@cs/koa';

/** What a refused request is told to wait: a worker frees within a thumbnail's making. */
const RETRY_AFTER_S = 2;
/** Pieces one account, and all together, may have waiting: past them a request is refused at once. */
const PER_ACCOUNT = 200;
const WAITING = 1000;

export interface ThumbnailWork {
  /** Runs `ensure` once for `id` at a time; a request for the same `id` meanwhile shares its outcome. */
  once(id: string, ensure: () => Promise<void>): Promise<void>;
  /** Runs `make` when a worker is free, in `account`'s turn; 503 with Retry-After after `maxWaitMs`. */
  make<T>(account: string, make: () => Promise<T>): Promise<T>;
}

export function createThumbnailWork({ workers, maxWaitMs }: { workers: number; maxWaitMs: number }): ThumbnailWork {
  const line = createBulkhead({
    name: 'thumbnail',
    concurrency: workers,
    perClient: PER_ACCOUNT,
    total: WAITING,
    maxWaitMs,
    retryAfterS: RETRY_AFTER_S,
  });
  const inFlight = new Map<string, Promise<void>>();
  return {
    once(id, ensure) {
      const running = inFlight.get(id);
      if (running) return running;
      const started = ensure().finally(() => inFlight.delete(id));
      inFlight.set(id, started);
      return started;
    },
    make: (account, make) => line.run(account, make),
  };
}
