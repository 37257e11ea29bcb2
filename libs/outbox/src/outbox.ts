/**
 * An outbox: work a service owes after a write of its own (tell another service, release an
 * object, publish an event), kept in its own database until a handler has done it. Each domain
 * declares one with a name, its collection and a handler; this module does the rest.
 *
 * The recipe, without transactions (FerretDB has none): the intent first.
 * 1. `enqueue` writes the entry, due at once;
 * 2. the caller makes its domain write;
 * 3. the caller calls `dispatch(entry)`: tried at once in this process, not at the next poll.
 * So an entry may be handled before its write has landed, or for a write that never will (the
 * process died after 1, or the write lost a race). The handler settles the entry against the
 * document as it is when it runs, in one of two ways:
 * - it finishes the write itself (identity deletes the user first);
 * - or it acts only once the document shows the write. While it does not, an entry younger than
 *   SETTLE_MS (`isSettled`) throws and is tried again later; an older one is dropped, as its write
 *   has landed or never will (the turns' bound, `@cs/mongo` STALE_MS). Notes releases no key a
 *   note still holds.
 * The other order, the domain write and then its entry, loses the work when the process dies in
 * between: never that.
 *
 * Then, for every entry:
 * - a try is taken under a lease decided by a unique index (lease.ts), for `leaseMs`; but the
 *   first try of a dispatched entry younger than FIRST_TRY_MS takes none: no poll takes an entry
 *   that young and never tried, and this process tries it once at a time (should that try
 *   outlive FIRST_TRY_MS, a poll's try beside it is one more handling, which handlers allow);
 * - the dispatch may hand the handler what the write wrote (`written`), so that it need not read
 *   it again, also when the entry waits for an earlier one of its document (below); and the writer may say which entry is the only one that can come before its own:
 *   none for a new document (`first`), or the previous version's (`after`). Either way its order
 *   need not be looked up: not for `first`, and not when this process did `after` (see below);
 * - entries are written together and done entries deleted together (`@cs/mongo`'s
 *   `batchedByTurn`): those of one turn of the event loop in one `insertMany`, one `deleteMany`;
 * - handlers are idempotent: an entry may be handled more than once (a lease run out, a process
 *   dead after the handler and before the entry's deletion). A handler that returns is done, and
 *   the entry is deleted; one that throws is tried again after `backoffMs` (backoff.ts), for
 *   ever, with its error kept on the entry;
 * - with `orderBy`, entries about one document (one value of that field) are handled one at a
 *   time in the order they were written (`createdAt`, then `_id`): a later entry waits while an
 *   earlier one is there, in backoff too;
 * - polling (`start`) is only the fallback, for entries no live process dispatched or retried:
 *   it leaves an entry never tried to its dispatch for FIRST_TRY_MS;
 * - the backlog is served as `outbox_entries` and `outbox_oldest_entry_age_seconds{outbox=name}`.
 *
 * One try of one entry is attempt.ts; the order of one document's entries, document-order.ts.
 */

import { repeatEvery } from '@cs/lifecycle';
import { backlogOf, insertTogether, isDuplicateKey, STALE_MS, trusted } from '@cs/mongo';
import { watchOutbox } from '@cs/telemetry';
import { createAttempt, type Dispatched, FIRST_TRY_MS } from './attempt';
import { createDocumentOrder } from './document-order';
import type { OutboxEntry } from './entry';
import type { OutboxOptions, Own } from './options';

/** After this long, a write an entry announces has landed or never will (`@cs/mongo` turns). */
export const SETTLE_MS = STALE_MS;

/** Whether the write that `entry` announces has landed or never will: see the recipe above. */
export function isSettled(entry: Pick<OutboxEntry, 'createdAt'>, now = Date.now()): boolean {
  return now - entry.createdAt.getTime() >= SETTLE_MS;
}
/** How long a taken try is left to its taker before another worker may take the next. */
export const LEASE_MS = 30_000;
/** Entries read per query of a pass. */
const BATCH = 20;

export interface Outbox<E extends OutboxEntry, W = never> {
  /**
   * Writes an entry (step 1 of the recipe). With an `_id`, idempotent: an entry already there is
   * kept as it is, and returned.
   */
  enqueue(fields: Own<E>): Promise<E>;
  /**
   * Tries an entry now, in the background (step 3). An entry in backoff waits for its time.
   */
  dispatch(entry: E, dispatched?: Dispatched<W>): void;
  /** Tries due entries, oldest due first, at most `limit`; how many were done. */
  drain(limit?: number): Promise<number>;
  /**
   * Drains every `intervalMs`, leaving entries younger than FIRST_TRY_MS and never tried to their
   * dispatch; returns the function that stops it and waits for tries under way.
   */
  start(intervalMs: number): () => Promise<void>;
  /** How many entries wait, and since when the oldest does. */
  backlog(): Promise<{ entries: number; oldest?: Date }>;
}

export function createOutbox<E extends OutboxEntry, W = never>({
  name,
  entries,
  handle,
  orderBy,
  what,
  logger,
  leaseMs = LEASE_MS,
}: OutboxOptions<E, W>): Outbox<E, W> {
  const insert = insertTogether(entries);
  const running = new Set<Promise<unknown>>();

  const background = (work: Promise<unknown>) => {
    const done = work
      .catch((err: unknown) => logger.warn({ err, outbox: name }, `immediate ${what} failed; the outbox will retry`))
      .finally(() => running.delete(done));
    running.add(done);
  };

  const order = createDocumentOrder<E, W>(entries, orderBy);
  const attempt = createAttempt<E, W>({ name, entries, handle, what, logger, leaseMs, order, background });

  const self: Outbox<E, W> = {
    async enqueue(fields) {
      const now = Date.now();
      const bookkeeping = { attempts: 0, dueAt: new Date(now), lastError: null, createdAt: new Date(now) };
      // One insert, on the request's path, sent with those of the other requests of this turn
      // (`insertTogether`): an entry with an `_id` that is there already is read instead (the
      // same write recorded again), and kept as it is.
      const entry = new entries({ ...fields, ...bookkeeping });
      try {
        await insert(entry);
        return entry.toObject() as E;
      } catch (err) {
        if (fields._id === undefined || !isDuplicateKey(err)) throw err;
      }
      const found = await entries.findById(fields._id).lean<E>();
      if (!found) throw new Error(`outbox ${name}: entry ${String(fields._id)} vanished as it was written`);
      return found;
    },

    dispatch(entry, dispatched = {}) {
      background(attempt(entry, Date.now(), dispatched));
    },

    drain: (limit = 100) => pass(limit, 0),

    start(intervalMs) {
      const stopPolling = repeatEvery(
        intervalMs,
        () => pass(100, FIRST_TRY_MS),
        (err) => logger.warn({ err, outbox: name }, `${what} pass failed`),
      );
      return async () => {
        await stopPolling();
        await Promise.all([...running]);
      };
    },

    backlog: () => backlogOf(entries),
  };

  /** Tries due entries, oldest due first, at most `limit`, but those never tried younger than `leaveMs`. */
  async function pass(limit: number, leaveMs: number): Promise<number> {
    let done = 0;
    let taken = 0;
    while (taken < limit) {
      const readAt = Date.now();
      const due = await entries
        .find({ dueAt: trusted({ $lte: new Date(readAt) }) } as never)
        .sort({ dueAt: 1 })
        .limit(Math.min(BATCH, limit - taken))
        .lean<E[]>();
      let takenNow = 0;
      for (const entry of due) {
        if ((entry.attempts ?? 0) === 0 && readAt - entry.createdAt.getTime() < leaveMs) continue;
        const outcome = await attempt(entry, readAt, undefined);
        if (outcome === 'not taken') continue;
        takenNow += 1;
        if (outcome === 'done') done += 1;
      }
      // Nothing due, or all of it taken by other workers or waiting its turn: this pass is over.
      if (takenNow === 0) break;
      taken += takenNow;
    }
    return done;
  }
  watchOutbox(name, self.backlog);
  return self;
}
