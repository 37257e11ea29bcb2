/**
 * An outbox: work a service owes after a write of its own (tell another service, release an
 * object, publish an event), kept in its own database until a handler has done it. Each domain
 * declares one with a name, its collection and a handler; this module does the rest.
 *
 * The recipe, without transactions (FerretDB has none): the intent first.
 * 1. `enqueue` writes the entry, due only SETTLE_MS later: by then the write it announces has
 *    landed or never will (the turns' bound, `@cs/mongo` STALE_MS);
 * 2. the caller makes its domain write;
 * 3. the caller calls `dispatch(entry)`: tried at once in this process, not at the next poll.
 * A process that dies after 1 leaves an entry for a write that may not have happened, and one
 * that dies after 2 an entry nobody dispatched. Either way a poll finds it once due, and the
 * handler settles it against the document as it is then: it finishes the write itself (identity
 * deletes the user first), or sees the write did not happen and does nothing (notes releases no
 * key a note still holds). The other order, the domain write and then its entry, loses the work
 * when the process dies in between: never that.
 *
 * Then, for every entry:
 * - a try is taken under a lease decided by a unique index (lease.ts), for `leaseMs`;
 * - handlers are idempotent: an entry may be handled more than once (a lease run out, a process
 *   dead after the handler and before the entry's deletion). A handler that returns is done, and
 *   the entry is deleted; one that throws is tried again after `backoffMs` (backoff.ts), for
 *   ever, with its error kept on the entry;
 * - with `orderBy`, entries about one document (one value of that field) are handled one at a
 *   time in the order they were written (`createdAt`, then `_id`): a later entry waits while an
 *   earlier one is there, in backoff too;
 * - polling (`start`) is only the fallback, for entries no live process dispatched or retried;
 * - the backlog is served as `outbox_entries` and `outbox_oldest_entry_age_seconds{outbox=name}`.
 */

import { repeatEvery } from '@cs/lifecycle';
import type { Logger } from '@cs/log';
import { backlogOf, STALE_MS, trusted } from '@cs/mongo';
import { watchOutbox } from '@cs/telemetry';
import type { Model } from 'mongoose';
import { backoffMs } from './backoff';
import { createLeases } from './lease';

/** How long after `enqueue` an entry nobody dispatched becomes due to a poll. */
export const SETTLE_MS = STALE_MS;
/** How long a taken try is left to its taker before another worker may take the next. */
export const LEASE_MS = 30_000;
/** Entries read per query of a pass. */
const BATCH = 20;

/**
 * The fields every entry has, beside the domain's own. Its schema declares them, with an index
 * on `dueAt` (a pass's query) and `createdAt` required (the backlog's age).
 */
export interface OutboxEntry {
  _id: unknown;
  /** Tries taken so far. */
  attempts: number;
  /** Not tried before this time: settling, leased, or backing off. */
  dueAt: Date;
  /** What the last failed try threw. */
  lastError?: string | null;
  createdAt: Date;
}

type Own<E extends OutboxEntry> = Omit<E, keyof OutboxEntry> & { _id?: E['_id'] };

export interface OutboxOptions<E extends OutboxEntry> {
  /** The outbox's name: its metrics label and its leases' prefix. */
  name: string;
  /** The entries' collection, with the domain's own fields. */
  entries: Model<E>;
  /**
   * Does what the entry asks. May run more than once for one entry: it must be idempotent, and
   * settle the entry against the document as it is now (see above). Throws to be tried again.
   */
  handle(entry: E): Promise<void>;
  /** A field naming the document an entry is about: that document's entries go in order. */
  orderBy?: keyof Own<E> & string;
  /** What a try does, for the log: "<what> failed; will retry". */
  what: string;
  logger: Logger;
  leaseMs?: number;
  settleMs?: number;
}

export interface Outbox<E extends OutboxEntry> {
  /**
   * Writes an entry (step 1 of the recipe). With an `_id`, idempotent: an entry already there is
   * kept as it is, and returned.
   */
  enqueue(fields: Own<E>): Promise<E>;
  /**
   * Tries an entry now, in the background (step 3): the caller's write is done, so an entry not
   * tried yet is tried even while it settles. An entry in backoff waits for its time.
   */
  dispatch(entry: E): void;
  /** Tries due entries, oldest due first, at most `limit`; how many were done. */
  drain(limit?: number): Promise<number>;
  /** Polls every `intervalMs`; returns the function that stops it and waits for tries under way. */
  start(intervalMs: number): () => Promise<void>;
  /** How many entries wait, and since when the oldest does. */
  backlog(): Promise<{ entries: number; oldest?: Date }>;
}

type Outcome = 'done' | 'failed' | 'not taken';

export function createOutbox<E extends OutboxEntry>({
  name,
  entries,
  handle,
  orderBy,
  what,
  logger,
  leaseMs = LEASE_MS,
  settleMs = SETTLE_MS,
}: OutboxOptions<E>): Outbox<E> {
  const leases = createLeases(entries.db, name, { leaseMs });
  const idOf = (entry: E) => String(entry._id);
  /** Entries dispatched while an earlier one of their document was there: tried once it is done. */
  const waiting = new Map<string, E>();
  const running = new Set<Promise<unknown>>();
  let ordered: Promise<unknown> | undefined;

  const background = (work: Promise<unknown>) => {
    const done = work
      .catch((err: unknown) => logger.warn({ err, outbox: name }, `immediate ${what} failed; the outbox will retry`))
      .finally(() => running.delete(done));
    running.add(done);
  };

  /** The earliest entry about the same document as `entry` (itself, when it is first). */
  async function firstOf(entry: E): Promise<string | undefined> {
    if (!orderBy) return idOf(entry);
    ordered ??= entries.collection.createIndex({ [orderBy]: 1, createdAt: 1, _id: 1 });
    await ordered;
    const first = await entries
      .findOne({ [orderBy]: entry[orderBy as keyof E] } as never)
      .sort({ createdAt: 1, _id: 1 })
      .select('_id')
      .lean<{ _id: unknown }>();
    return first ? String(first._id) : undefined;
  }

  /** After an entry of an ordered outbox is done, the next one of its document, if dispatched here. */
  function next(entry: E): void {
    if (!orderBy) return;
    background(
      (async () => {
        const first = await firstOf(entry);
        const successor = first && waiting.get(first);
        if (successor) await attempt(successor, Date.now(), true);
      })(),
    );
  }

  async function attempt(entry: E, readAt: number, dispatched: boolean): Promise<Outcome> {
    const attempts = entry.attempts ?? 0;
    const due = entry.dueAt.getTime() <= readAt || (dispatched && attempts === 0);
    if (!due) return 'not taken';
    const id = idOf(entry);
    if ((await firstOf(entry)) !== id) {
      if (dispatched) waiting.set(id, entry);
      return 'not taken';
    }
    waiting.delete(id);
    const tried = await leases.take(id, attempts, readAt);
    if (tried === undefined) return 'not taken';
    const filter = { _id: entry._id } as never;
    await entries.updateOne(filter, { $set: { attempts: tried, dueAt: new Date(Date.now() + leaseMs) } });
    try {
      await handle({ ...entry, attempts: tried });
    } catch (err) {
      const message = String((err as Error)?.message ?? err);
      // A try that outlived its lease may overwrite a later try's due time: at worst one more try.
      await entries.updateOne(filter, {
        $set: { dueAt: new Date(Date.now() + backoffMs(tried)), lastError: message },
      });
      logger.warn({ outbox: name, entry: id, attempts: tried, err: message }, `${what} failed; will retry`);
      return 'failed';
    }
    await entries.deleteOne(filter);
    next(entry);
    return 'done';
  }

  const self: Outbox<E> = {
    async enqueue(fields) {
      const now = Date.now();
      const bookkeeping = { attempts: 0, dueAt: new Date(now + settleMs), lastError: null, createdAt: new Date(now) };
      if (fields._id === undefined) {
        const [created] = await entries.insertMany([{ ...fields, ...bookkeeping } as never]);
        return (created as unknown as { toObject(): E }).toObject();
      }
      const { _id, ...own } = fields;
      await entries.updateOne({ _id } as never, { $setOnInsert: { ...own, ...bookkeeping } } as never, {
        upsert: true,
      });
      const entry = await entries.findById(_id).lean<E>();
      if (!entry) throw new Error(`outbox ${name}: entry ${String(_id)} vanished as it was written`);
      return entry;
    },

    dispatch(entry) {
      background(attempt(entry, Date.now(), true));
    },

    async drain(limit = 100) {
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
          const outcome = await attempt(entry, readAt, false);
          if (outcome === 'not taken') continue;
          takenNow += 1;
          if (outcome === 'done') done += 1;
        }
        // Nothing due, or all of it taken by other workers or waiting its turn: this pass is over.
        if (takenNow === 0) break;
        taken += takenNow;
      }
      return done;
    },

    start(intervalMs) {
      const stopPolling = repeatEvery(
        intervalMs,
        () => self.drain(),
        (err) => logger.warn({ err, outbox: name }, `${what} pass failed`),
      );
      return async () => {
        await stopPolling();
        await Promise.all([...running]);
      };
    },

    backlog: () => backlogOf(entries),
  };
  watchOutbox(name, self.backlog);
  return self;
}
