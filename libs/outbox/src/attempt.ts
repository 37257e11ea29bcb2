/**
 * One try of one entry: taken under a lease (lease.ts), or under none when it is the first try of
 * an entry just dispatched; handed to the handler; then deleted when the handler returns, or put
 * off by `backoffMs` (backoff.ts) with its error when it throws. An entry of an ordered outbox is
 * tried only when it is its document's first (document-order.ts); a dispatched one that is not
 * waits here for the one before it.
 */
import { batchedByTurn, trusted } from '@cs/mongo';
import { backoffMs } from './backoff';
import type { DocumentOrder } from './document-order';
import type { OutboxEntry } from './entry';
import { createLeases } from './lease';
import type { OutboxOptions } from './options';

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

export type Outcome = 'done' | 'failed' | 'not taken';

/** Tries `entry`, read at `readAt`; `dispatched` when a dispatch asks, undefined for a poll. */
export type Attempt<E, W> = (entry: E, readAt: number, dispatched: Dispatched<W> | undefined) => Promise<Outcome>;

export function createAttempt<E extends OutboxEntry, W>({
  name,
  entries,
  handle,
  what,
  logger,
  leaseMs,
  order,
  background,
}: Pick<OutboxOptions<E, W>, 'name' | 'entries' | 'handle' | 'what' | 'logger'> & {
  leaseMs: number;
  order: DocumentOrder<E, W>;
  /** Runs work in the background: a failure is logged, and stopping waits for it. */
  background: (work: Promise<unknown>) => void;
}): Attempt<E, W> {
  const leases = createLeases(entries.db, name, { leaseMs });
  const idOf = (entry: E) => String(entry._id);
  /** Entries being tried in this process: never twice at once here. */
  const trying = new Set<string>();
  const deleteDone = batchedByTurn<unknown, void>(async (ids) => {
    await entries.deleteMany({ _id: trusted({ $in: ids }) } as never).exec();
    return ids.map(() => ({ value: undefined }));
  });

  /**
   * After an entry of an ordered outbox is done, the next one of its document, if dispatched here
   * (nothing to look up when none of its document waits here).
   */
  function next(entry: E): void {
    if (!order.isWaitedOn(entry)) return;
    background(
      (async () => {
        const successor = await order.successor(entry);
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
    const follows = dispatched?.after !== undefined && order.follows(entry, dispatched.after);
    if (!dispatched?.first && !follows && (await order.firstOf(entry)) !== id) {
      if (dispatched) {
        const { written } = dispatched;
        if (order.wait(id, { entry, written })) {
          // The earlier entry may have been done between the read above and now, and looked for
          // its successor before this one waited: asked once more, now that it waits, once this
          // try has let go of it (`trying`).
          background(
            new Promise((resolve) => setImmediate(resolve)).then(() => attempt(entry, Date.now(), { written })),
          );
        }
      }
      return 'not taken';
    }
    order.stopWaiting(id);
    // No poll takes an entry this young and never tried: this try needs no lease (see outbox.ts).
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
    order.done(entry);
    next(entry);
    return 'done';
  }

  return attempt;
}
