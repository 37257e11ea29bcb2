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
 */

import { repeatEvery } from '@cs/lifecycle';
import type { Logger } from '@cs/log';
import { backlogOf, batchedByTurn, insertTogether, isDuplicateKey, STALE_MS, trusted } from '@cs/mongo';
import { watchOutbox } from '@cs/telemetry';
import type { Model } from 'mongoose';
import { backoffMs } from './backoff';
import type { OutboxEntry } from './entry';
import { createLeases } from './lease';

/** After this long, a write an entry announces has landed or never will (`@cs/mongo` turns). */
export const SETTLE_MS = STALE_MS;

/** Whether the write that `entry` announces has landed or never will: see the recipe above. */
export function isSettled(entry: Pick<OutboxEntry, 'createdAt'>, now = Date.now()): boolean {
  return now - entry.createdAt.getTime() >= SETTLE_MS;
}
/** How long a taken try is left to its taker before another worker may take the next. */
export const LEASE_MS = 30_000;
/**
 * A poll leaves an entry this young, never tried, to the dispatch that follows its write: taken by
 * a poll before that write lands, its try would fail and send it into a backoff the dispatch then
 * waits out.
 */
export const FIRST_TRY_MS = 1_000;
/**
 * A try still at work after this long is recorded on its entry (attempts, and due when its lease
 * ends); one done sooner is deleted without it. Well below FIRST_TRY_MS, so that a poll finds a
 * try that outlives it recorded, and well above a handler's usual few milliseconds.
 */
const RECORD_AFTER_MS = 200;
/** Dispatched entries kept waiting for an earlier one, at most. */
const MAX_WAITING = 1_000;
/** Documents whose last entry done in this process is remembered (for `after`), at most. */
const MAX_REMEMBERED = 1_000;
/** Entries read per query of a pass. */
const BATCH = 20;

type Own<E extends OutboxEntry> = Omit<E, keyof OutboxEntry> & { _id?: E['_id'] };

export interface OutboxOptions<E extends OutboxEntry, W = never> {
  /** The outbox's name: its metrics label and its leases' prefix. */
  name: string;
  /** The entries' collection, with the domain's own fields. */
  entries: Model<E>;
  /**
   * Does what the entry asks. May run more than once for one entry: it must be idempotent, and
   * settle the entry against the document as it is now (see above), or as `written` when the
   * dispatch hands it what the write wrote. Throws to be tried again.
   */
  handle(entry: E, written?: W): Promise<void>;
  /** A field naming the document an entry is about: that document's entries go in order. */
  orderBy?: keyof Own<E> & string;
  /** What a try does, for the log: "<what> failed; will retry". */
  what: string;
  logger: Logger;
  leaseMs?: number;
}

/** What a dispatch may tell of its entry's write. */
export interface Dispatched<W> {
  /** What the write wrote, handed to the handler on this try. */
  written?: W;
  /** The entry is its document's first (the write created the document): no earlier one to wait for. */
  first?: boolean;
  /**
   * The `_id` of the one entry that can come before this one (the document's previous version's).
   * When this process did that entry, nothing earlier is left: it was done only once it was first,
   * and the entries before it were written before it. Otherwise the order is looked up.
   */
  after?: unknown;
}

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

type Outcome = 'done' | 'failed' | 'not taken';

export function createOutbox<E extends OutboxEntry, W = never>({
  name,
  entries,
  handle,
  orderBy,
  what,
  logger,
  leaseMs = LEASE_MS,
}: OutboxOptions<E, W>): Outbox<E, W> {
  const leases = createLeases(entries.db, name, { leaseMs });
  const idOf = (entry: E) => String(entry._id);
  /** Entries being tried in this process: never twice at once here. */
  const trying = new Set<string>();
  const insert = insertTogether(entries);
  const deleteDone = batchedByTurn<unknown, void>(async (ids) => {
    await entries.deleteMany({ _id: trusted({ $in: ids }) } as never).exec();
    return ids.map(() => ({ value: undefined }));
  });
  /**
   * Entries dispatched while an earlier one of their document was there, with what their write
   * wrote: tried once it is done, still without a read.
   */
  const waiting = new Map<string, { entry: E; written?: W }>();
  /** Of recently done documents (`orderBy`), the last entry this process did (`after`). */
  const doneHere = new Map<string, string>();
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

  /** `id` was the last entry of `document` done here: its successor's dispatch need not look. */
  function remember(document: string, id: string): void {
    doneHere.delete(document);
    doneHere.set(document, id);
    if (doneHere.size > MAX_REMEMBERED) doneHere.delete(doneHere.keys().next().value as string);
  }

  /**
   * After an entry of an ordered outbox is done, the next one of its document, if dispatched here
   * (nothing to look up when none of its document waits here).
   */
  function next(entry: E): void {
    if (!orderBy) return;
    const document = entry[orderBy as keyof E];
    if (![...waiting.values()].some((waits) => waits.entry[orderBy as keyof E] === document)) return;
    background(
      (async () => {
        const first = await firstOf(entry);
        const successor = first && waiting.get(first);
        if (successor) await attempt(successor.entry, Date.now(), { written: successor.written });
      })(),
    );
  }

  async function attempt(entry: E, readAt: number, dispatched: Dispatched<W> | undefined): Promise<Outcome> {
    const id = idOf(entry);
    if (trying.has(id)) return 'not taken';
    trying.add(id);
    try {
      return await tryEntry(entry, readAt, dispatched);
    } finally {
      trying.delete(id);
    }
  }

  async function tryEntry(entry: E, readAt: number, dispatched: Dispatched<W> | undefined): Promise<Outcome> {
    const attempts = entry.attempts ?? 0;
    if (entry.dueAt.getTime() > readAt) return 'not taken';
    const id = idOf(entry);
    const follows =
      orderBy !== undefined &&
      dispatched?.after !== undefined &&
      doneHere.get(String(entry[orderBy as keyof E])) === String(dispatched.after);
    if (!dispatched?.first && !follows && (await firstOf(entry)) !== id) {
      if (dispatched && !waiting.has(id)) {
        const { written } = dispatched;
        waiting.set(id, { entry, written });
        // Those whose earlier entry another process finished are found by a poll instead.
        if (waiting.size > MAX_WAITING) waiting.delete(waiting.keys().next().value as string);
        // The earlier entry may have been done between the read above and now, and looked for
        // its successor before this one waited: asked once more, now that it waits, once this
        // try has let go of it (`trying`).
        background(new Promise((resolve) => setImmediate(resolve)).then(() => attempt(entry, Date.now(), { written })));
      }
      return 'not taken';
    }
    waiting.delete(id);
    // No poll takes an entry this young and never tried: this try needs no lease (see above).
    const unleased =
      dispatched !== undefined && attempts === 0 && Date.now() - entry.createdAt.getTime() < FIRST_TRY_MS;
    const tried = unleased ? 1 : await leases.take(id, attempts, readAt);
    if (tried === undefined) return 'not taken';
    const filter = { _id: entry._id } as never;
    // The try is recorded on the entry (so that polls leave it alone until its lease ends) only
    // when the handler is still at work after RECORD_AFTER_MS: most tries are done by then, and
    // their entry is deleted instead. The lease decides who holds the try either way.
    let recorded: Promise<unknown> | undefined;
    const record = setTimeout(() => {
      recorded = entries.updateOne(filter, { $set: { attempts: tried, dueAt: new Date(Date.now() + leaseMs) } }).exec();
      recorded.catch(() => undefined);
    }, RECORD_AFTER_MS);
    try {
      await handle({ ...entry, attempts: tried }, dispatched?.written);
    } catch (err) {
      clearTimeout(record);
      await recorded?.catch(() => undefined);
      const message = String((err as Error)?.message ?? err);
      // A try that outlived its lease may overwrite a later try's due time: at worst one more try.
      await entries.updateOne(filter, {
        $set: { attempts: tried, dueAt: new Date(Date.now() + backoffMs(tried)), lastError: message },
      });
      logger.warn({ outbox: name, entry: id, attempts: tried, err: message }, `${what} failed; will retry`);
      return 'failed';
    }
    clearTimeout(record);
    await recorded?.catch(() => undefined);
    await deleteDone(entry._id);
    if (orderBy) remember(String(entry[orderBy as keyof E]), id);
    next(entry);
    return 'done';
  }

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
