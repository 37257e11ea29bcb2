/**
 * The public listing's change log: every change to a published post is an entry, and the entries
 * are numbered 1, 2, 3… without gaps, on every MongoDB-protocol server we run.
 *
 * Why a log. Each replica keeps the listing in memory (listing.ts) and must learn, on the next
 * read, of every change acknowledged anywhere, and of which post it was, so it can catch up by
 * reading that post alone instead of the whole list again.
 *
 * The numbers are @cs/mongo's numbered log: an entry is an insert whose `_id` is its number, so
 * replicas on FerretDB never share or skip one. A change is written, then logged, then
 * acknowledged; so a reader that finds the first number after its own missing has seen the entry
 * of every change acknowledged before it looked.
 *
 * One writer at a time in a process, and one entry for all the changes waiting then (a group
 * commit): writers of one process never race each other for a number (ten at once each used to
 * try up to ten), and a burst of changes costs one insert. Only replicas race, once per entry.
 *
 * `head` is a hint, not a counter: a recent number, moved up every HINT_EVERY entries, so a replica
 * that has been quiet does not try its way through every entry since. It may lag (it is written
 * in the background, and its writes race; two first upserts: one inserts, the other fails); the
 * log is still right, only a few more numbers are tried.
 *
 * Entries are kept RETAIN_MS, far longer than a replica keeps its listing without reading it all
 * again (twice listing-catch-up.ts MAX_AGE_MS), so no replica can miss an entry that was already
 * deleted.
 */
import { appendNumbered, modelOf, readNumbered } from '@cs/mongo';
import { type Connection, Schema } from 'mongoose';

/** Longer than any replica's listing lives without being read again in full (see listing-catch-up.ts). */
export const RETAIN_MS = 120_000;
/** Every this many entries, the writer of one moves the head hint up to it. */
const HINT_EVERY = 16;
/** Every this many entries, the writer of one deletes those older than RETAIN_MS. */
const PRUNE_EVERY = 512;
/** How many numbers a reader looks up at once while catching up, after the first. */
const WINDOW = 8;
const HEAD = 'head';

/** What changed: one post, an author's posts (their account is gone), or anything at all. */
export type Change = { postId: string } | { authorId: string } | { all: true };

/** The most changes one entry holds; more waiting are the next entry's. */
const BATCH_MAX = 256;

/**
 * An entry (`_id` its number) with its changes, or the head hint (`_id` 'head', with `seq`).
 * Entries written before group commit hold one change in `postId`, `authorId` or `all`; a replica
 * of that time reads a `changes` entry as a change of anything (a whole re-read: slower, never wrong).
 */
interface EntryDoc {
  _id: string;
  at?: Date;
  changes?: Change[];
  postId?: string;
  authorId?: string;
  all?: boolean;
  seq?: number;
}

export interface Entry {
  seq: number;
  changes: Change[];
}

export interface ListingLog {
  /** Logs a change: call after it is written, before it is acknowledged. Returns its number. */
  record(change: Change): Promise<number>;
  /** The number of the newest entry right now (0 when there is none). */
  head(): Promise<number>;
  /** The entries after `seq`, in order, up to `max` of them; null when more than `max` follow. */
  after(seq: number, max: number): Promise<Entry[] | null>;
}

function changesOf(doc: EntryDoc): Change[] {
  if (doc.changes) return doc.changes;
  if (doc.postId !== undefined) return [{ postId: doc.postId }];
  if (doc.authorId !== undefined) return [{ authorId: doc.authorId }];
  return [{ all: true }];
}

const entrySchema = new Schema<EntryDoc>(
  { _id: String, at: Date, changes: [Schema.Types.Mixed], postId: String, authorId: String, all: Boolean, seq: Number },
  { versionKey: false },
);

interface Waiting {
  change: Change;
  logged: (seq: number) => void;
  failed: (err: unknown) => void;
}

export function createListingLog(connection: Connection, collectionName = 'listing_changes'): ListingLog {
  const entries = modelOf(connection, `ListingChange:${collectionName}`, entrySchema, collectionName);
  /** The newest number this process has written or read. */
  let known = 0;

  const hint = async () => (await entries.findById(HEAD).lean<EntryDoc>())?.seq ?? 0;
  const entry = (seq: number) => entries.findById(String(seq)).lean<EntryDoc>();

  /** The entries after `seq` that exist now, in order, stopping past `max`. */
  async function walk(seq: number, max: number): Promise<Entry[]> {
    const found = await readNumbered(seq, entry, { window: WINDOW, atLeast: max + 1 });
    return found.map((doc, i) => ({ seq: seq + 1 + i, changes: changesOf(doc) }));
  }

  async function prune(): Promise<void> {
    await entries.deleteMany({ at: { $lt: new Date(Date.now() - RETAIN_MS) } });
  }

  /**
   * One entry holding `changes`, at the first free number; returns it. After the newest number
   * this process knows of: one insert when no other replica wrote since, as in a burst of one
   * replica's changes. The hint is read before the first entry, and after a number found taken.
   */
  async function append(changes: Change[]): Promise<number> {
    const firstTry = (known > 0 ? known : await hint()) + 1;
    const seq = await appendNumbered(
      firstTry,
      (n) => entries.create({ _id: String(n), at: new Date(), changes }),
      hint,
    );
    known = Math.max(known, seq);
    // The hint is housekeeping too: written in the background, every HINT_EVERY entries.
    if (seq % HINT_EVERY === 0) {
      entries.updateOne({ _id: HEAD }, { $max: { seq } }, { upsert: true }).catch(() => undefined);
    }
    // Pruning is housekeeping, never a reason to fail the write that was just logged.
    if (seq % PRUNE_EVERY === 0) prune().catch(() => undefined);
    return seq;
  }

  /** Changes waiting for the entry being written to land; the next entry holds them. */
  let waiting: Waiting[] = [];
  let writing = false;

  async function writeWaiting(): Promise<void> {
    writing = true;
    while (waiting.length > 0) {
      const batch = waiting.slice(0, BATCH_MAX);
      waiting = waiting.slice(batch.length);
      try {
        const seq = await append(batch.map((w) => w.change));
        for (const w of batch) w.logged(seq);
      } catch (err) {
        for (const w of batch) w.failed(err);
      }
    }
    writing = false;
  }

  return {
    record(change) {
      return new Promise<number>((logged, failed) => {
        waiting.push({ change, logged, failed });
        if (!writing) void writeWaiting();
      });
    },

    async head() {
      const from = Math.max(known, await hint());
      const found = await walk(from, Number.POSITIVE_INFINITY);
      const seq = found.at(-1)?.seq ?? from;
      known = Math.max(known, seq);
      return seq;
    },

    async after(seq, max) {
      const found = await walk(seq, max);
      if (found.length > max) return null;
      known = Math.max(known, found.at(-1)?.seq ?? seq);
      return found;
    },
  };
}
