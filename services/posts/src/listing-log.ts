/**
 * The public listing's change log: every change to a published post is an entry, and the entries
 * are numbered 1, 2, 3… without gaps, on every MongoDB-protocol server we run.
 *
 * Why a log. Each replica keeps the listing in memory (listing.ts) and must learn, on the next
 * read, of every change acknowledged anywhere, and of which post it was, so it can catch up by
 * reading that post alone instead of the whole list again.
 *
 * Why the numbers hold on FerretDB, whose conditional writes are not atomic: an entry is an
 * insert, its `_id` is its number, and `_id`'s unique index lets one inserter have each number. A
 * writer tries the number after the newest it knows of, and the next one on a duplicate key, so a
 * number is only ever tried once the one before it exists: no gap. A change is written, then
 * logged, then acknowledged; so a reader that finds the first number after its own missing has
 * seen the entry of every change acknowledged before it looked.
 *
 * `head` is a hint, not a counter: a recent number, moved up every HINT_EVERY entries, so a replica
 * that has been quiet does not try its way through every entry since. It may lag (it is written
 * in the background, and its writes race; two first upserts: one inserts, the other fails); the
 * log is still right, only a few more numbers are tried.
 *
 * Entries are kept RETAIN_MS, far longer than a replica keeps its listing without reading it all
 * again (twice listing.ts MAX_AGE_MS), so no replica can miss an entry that was already deleted.
 */
import { isDuplicateKey, modelOf } from '@cs/mongo';
import { type Connection, Schema } from 'mongoose';

/** Longer than any replica's listing lives without being read again in full (see listing.ts). */
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

/** An entry (`_id` its number), or the head hint (`_id` 'head', with `seq`). */
interface EntryDoc {
  _id: string;
  at?: Date;
  postId?: string;
  authorId?: string;
  all?: boolean;
  seq?: number;
}

export interface Entry {
  seq: number;
  change: Change;
}

export interface ListingLog {
  /** Logs a change: call after it is written, before it is acknowledged. Returns its number. */
  record(change: Change): Promise<number>;
  /** The number of the newest entry right now (0 when there is none). */
  head(): Promise<number>;
  /** The entries after `seq`, in order, up to `max` of them; null when more than `max` follow. */
  after(seq: number, max: number): Promise<Entry[] | null>;
}

function changeOf(doc: EntryDoc): Change {
  if (doc.postId !== undefined) return { postId: doc.postId };
  if (doc.authorId !== undefined) return { authorId: doc.authorId };
  return { all: true };
}

const entrySchema = new Schema<EntryDoc>(
  { _id: String, at: Date, postId: String, authorId: String, all: Boolean, seq: Number },
  { versionKey: false },
);

export function createListingLog(connection: Connection, collectionName = 'listing_changes'): ListingLog {
  const entries = modelOf(connection, `ListingChange:${collectionName}`, entrySchema, collectionName);
  /** The newest number this process has written or read. */
  let known = 0;

  const hint = async () => (await entries.findById(HEAD).lean<EntryDoc>())?.seq ?? 0;
  const entry = (seq: number) => entries.findById(String(seq)).lean<EntryDoc>();

  /**
   * The entries after `seq` that exist now, in order, stopping past `max`. Most reads find none:
   * one lookup; past that, WINDOW at a time.
   */
  async function walk(seq: number, max: number): Promise<Entry[]> {
    const found: Entry[] = [];
    for (let width = 1; ; width = WINDOW) {
      const next = seq + found.length;
      const window = await Promise.all(Array.from({ length: width }, (_, i) => entry(next + 1 + i)));
      for (const [i, doc] of window.entries()) {
        if (!doc) return found;
        found.push({ seq: next + 1 + i, change: changeOf(doc) });
      }
      if (found.length > max) return found;
    }
  }

  async function prune(): Promise<void> {
    await entries.deleteMany({ at: { $lt: new Date(Date.now() - RETAIN_MS) } });
  }

  return {
    async record(change) {
      let seq = Math.max(known, await hint()) + 1;
      for (;;) {
        try {
          await entries.create({ _id: String(seq), at: new Date(), ...change });
          break;
        } catch (err) {
          if (!isDuplicateKey(err)) throw err;
          seq += 1;
        }
      }
      known = Math.max(known, seq);
      // The hint is housekeeping too: written in the background, every HINT_EVERY entries.
      if (seq % HINT_EVERY === 0) {
        entries.updateOne({ _id: HEAD }, { $max: { seq } }, { upsert: true }).catch(() => undefined);
      }
      // Pruning is housekeeping, never a reason to fail the write that was just logged.
      if (seq % PRUNE_EVERY === 0) prune().catch(() => undefined);
      return seq;
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
