/**
 * Writes in turns per account: at most WRITE_CONCURRENCY writes of a service run at once in one
 * process, and the rest wait in a line served one account after another (bulkhead.ts).
 *
 * A write costs several database operations, each a few milliseconds of CPU on FerretDB, so a
 * single account with many workers (an import) could otherwise keep every core busy, and every
 * other account's requests, reads from memory included, would wait behind its queue. In turns,
 * the import runs as fast as the line lets one account while nobody else writes, the cores keep
 * room for everyone's reads, and another account's write waits for one place to free, not behind
 * the import. What one account may have waiting is bounded too: past 64 writes, 429 with
 * Retry-After. When a write fails because the database is away, the writes waiting in line get
 * its 503 at once rather than each in turn after a wait (the 2 s a client is promised then). A
 * write that waits for a killed process's turn to go stale (`@cs/mongo` turns.ts) waits aside,
 * its place given to the next write meanwhile.
 *
 * Creates may take one place together, up to CREATES_TOGETHER of them (bulkhead.ts `together`):
 * started in one turn of the event loop, their inserts go as one operation each (`@cs/mongo`
 * together.ts). Without it two places could only ever group two creates, however many waited.
 */
import { availableParallelism } from 'node:os';
import { isUnavailable } from '@cs/errors';
import { type Bulkhead, createBulkhead } from './bulkhead';
import type { AppMiddleware } from './context';
import { toHttpError } from './error-handler';

/** Writes one account may have waiting for a place, per process. */
const WAITING_PER_ACCOUNT = 64;
/**
 * Creates that may share one place. Measured in `npm run bench` (14, 10 clients creating, on two
 * cores): with each create in a place of its own, 0.196× PocketBase's creates and 4.1 ms of CPU
 * each; with up to 8 together, 0.29× and 3.4 ms.
 */
const CREATES_TOGETHER = 8;

/**
 * The line of a service's writes: `concurrency` at once (WRITE_CONCURRENCY), one per core when 0.
 * One per core, measured on two (`npm run bench`, 11, a bulk publisher with 16 workers beside a
 * bystander): 2 at once kept the bystander within 1.1–1.4× of its latencies alone, the importer at
 * 40 posts/s; 3 and 4 let the importer reach 47 and 60 posts/s, and the bystander's reads of the
 * public list 2.7× and 2.9×.
 */
export function writeBulkhead(setting: number): Bulkhead {
  const concurrency = setting || availableParallelism();
  return createBulkhead({
    name: 'write',
    concurrency,
    perClient: WAITING_PER_ACCOUNT,
    total: WAITING_PER_ACCOUNT * Math.max(concurrency, 16),
    batch: CREATES_TOGETHER,
  });
}

/**
 * After requireAuth, on every route that writes: the handler runs in its account's turn. With
 * `together` (creates), it may share its place with other such writes, started at the same time.
 */
export function writesInTurn(line: Bulkhead, { together = false }: { together?: boolean } = {}): AppMiddleware {
  return async function writesInTurn(ctx, next) {
    const userId = ctx.state.userId;
    // Fails closed: mounted without requireAuth in front, every write would share one turn.
    if (userId === undefined) throw new Error('writesInTurn needs requireAuth before it');
    await line.run(
      userId,
      async () => {
        try {
          await next();
        } catch (err) {
          // The database is away: the writes waiting would each wait for a place, then fail the
          // same way after as long again. They get this write's 503 now, before its place is freed.
          if (isUnavailable(err)) line.refuseWaiting(toHttpError(err));
          throw err;
        }
      },
      { together },
    );
  };
}
