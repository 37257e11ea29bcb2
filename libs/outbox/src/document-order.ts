/**
 * An ordered outbox's order (`orderBy`): entries about one document are handled one at a time in
 * the order they were written (`createdAt`, then `_id`). This module knows which entry of a
 * document comes first, which dispatched entries wait here for an earlier one, and which entry of
 * a recently done document this process did last (a dispatch's `after`). Without `orderBy`, every
 * entry is first and none waits.
 */
import type { Model } from 'mongoose';
import type { OutboxEntry } from './entry';

/** Dispatched entries kept waiting for an earlier one, at most. */
const MAX_WAITING = 1_000;
/** Documents whose last entry done in this process is remembered (for `after`), at most. */
const MAX_REMEMBERED = 1_000;

/** A dispatched entry waiting for an earlier one of its document, with what its write wrote. */
export interface WaitingEntry<E, W> {
  entry: E;
  written?: W;
}

export interface DocumentOrder<E extends OutboxEntry, W> {
  /** The earliest entry about the same document as `entry` (itself, when it is first). */
  firstOf(entry: E): Promise<string | undefined>;
  /** Whether `after`, the one entry that can come before `entry`, is the last of its document done here. */
  follows(entry: E, after: unknown): boolean;
  /** Keeps a dispatched entry waiting for an earlier one; false when it waits already. */
  wait(id: string, waiting: WaitingEntry<E, W>): boolean;
  /** The entry is being tried: it waits no more. */
  stopWaiting(id: string): void;
  /** `entry` is done here: its successor's dispatch need not look (`after`). */
  done(entry: E): void;
  /** Whether a dispatched entry of `entry`'s document waits here (nothing to look up when none does). */
  isWaitedOn(entry: E): boolean;
  /** The entry now first of `entry`'s document, when it was dispatched here and waits. */
  successor(entry: E): Promise<WaitingEntry<E, W> | undefined>;
}

export function createDocumentOrder<E extends OutboxEntry, W>(
  entries: Model<E>,
  orderBy: string | undefined,
): DocumentOrder<E, W> {
  const idOf = (entry: E) => String(entry._id);
  const documentOf = (entry: E) => entry[orderBy as keyof E];
  /**
   * Entries dispatched while an earlier one of their document was there, with what their write
   * wrote: tried once it is done, still without a read.
   */
  const waiting = new Map<string, WaitingEntry<E, W>>();
  /** Of recently done documents (`orderBy`), the last entry this process did (`after`). */
  const doneHere = new Map<string, string>();
  let ordered: Promise<unknown> | undefined;

  async function firstOf(entry: E): Promise<string | undefined> {
    if (!orderBy) return idOf(entry);
    ordered ??= entries.collection.createIndex({ [orderBy]: 1, createdAt: 1, _id: 1 });
    await ordered;
    const first = await entries
      .findOne({ [orderBy]: documentOf(entry) } as never)
      .sort({ createdAt: 1, _id: 1 })
      .select('_id')
      .lean<{ _id: unknown }>();
    return first ? String(first._id) : undefined;
  }

  return {
    firstOf,

    follows(entry, after) {
      return orderBy !== undefined && doneHere.get(String(documentOf(entry))) === String(after);
    },

    wait(id, waits) {
      if (waiting.has(id)) return false;
      waiting.set(id, waits);
      // Those whose earlier entry another process finished are found by a poll instead.
      if (waiting.size > MAX_WAITING) waiting.delete(waiting.keys().next().value as string);
      return true;
    },

    stopWaiting(id) {
      waiting.delete(id);
    },

    done(entry) {
      if (!orderBy) return;
      const document = String(documentOf(entry));
      doneHere.delete(document);
      doneHere.set(document, idOf(entry));
      if (doneHere.size > MAX_REMEMBERED) doneHere.delete(doneHere.keys().next().value as string);
    },

    isWaitedOn(entry) {
      if (!orderBy) return false;
      const document = documentOf(entry);
      return [...waiting.values()].some((waits) => waits.entry[orderBy as keyof E] === document);
    },

    async successor(entry) {
      const first = await firstOf(entry);
      return first ? waiting.get(first) : undefined;
    },
  };
}
