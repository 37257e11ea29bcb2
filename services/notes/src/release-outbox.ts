/**
 * Releases the notes service owes the files service, kept in its own database until files
 * confirms. A note's deletion writes the entry and returns; the release happens right after, or
 * on a later pass when files or storage is away. An entry is taken with a lease, as its next
 * version under a turn (`@cs/mongo` turns), so of several replicas (or the immediate attempt and
 * the timer) exactly one takes it: one key is never released twice at once, on FerretDB as on
 * MongoDB.
 */
import { signToken } from '@cs/auth';
import type { Logger } from '@cs/log';
import { backlogOf, type Turns, trusted } from '@cs/mongo';
import type { Types } from 'mongoose';
import type { FilesClient } from './files-client';
import type { NoteModel, PendingRelease, PendingReleaseModel } from './model';

const LEASE_MS = 30_000;
const MAX_BACKOFF_MS = 60_000;
/** Entries read per query; each is then taken, or left to the replica that took it. */
const BATCH = 20;

/** An entry as read, and when: its next version must be taken within the turns' hold time. */
type Read = PendingRelease & { readAt: number };

export function createReleaseOutbox({
  pending,
  notes,
  files,
  turns,
  secret,
  logger,
}: {
  pending: PendingReleaseModel;
  notes: NoteModel;
  files: FilesClient;
  turns: Turns;
  secret: string;
  logger: Logger;
}) {
  /** Writes `changes` as the entry's next version if this caller gets that turn. */
  async function advance(entry: Read, changes: Partial<PendingRelease>): Promise<Read | undefined> {
    const done = await turns.advance(
      `release:${entry._id.toHexString()}`,
      entry.version ?? 0,
      entry.readAt,
      async (version) => {
        const filter = { _id: entry._id, version: entry.version ?? null };
        const { matchedCount } = await pending.updateOne(filter, { $set: { ...changes, version } });
        return matchedCount > 0 ? true : null;
      },
      async () => (await pending.findById(entry._id).lean<PendingRelease>())?.version ?? 0,
    );
    return done && { ...entry, ...changes, version: done.version, readAt: Date.now() };
  }

  /** Takes a due entry for LEASE_MS; undefined when it is not due or another worker took it. */
  function take(entry: Read): Promise<Read | undefined> {
    if (entry.dueAt.getTime() > entry.readAt) return Promise.resolve(undefined);
    return advance(entry, { dueAt: new Date(entry.readAt + LEASE_MS), attempts: (entry.attempts ?? 0) + 1 });
  }

  async function attempt(entry: Read): Promise<boolean> {
    // A note that (again) holds the key still needs the object: nothing to release.
    if (await notes.exists({ _id: entry.noteId, attachmentKey: entry.key })) {
      await pending.deleteOne({ _id: entry._id });
      return true;
    }
    try {
      // On behalf of the note's owner: files checks the key is theirs, as for any caller.
      const token = signToken(entry.ownerId, { secret, expiresIn: '5m' });
      await files.release(entry.key, `Bearer ${token}`);
      await pending.deleteOne({ _id: entry._id });
      return true;
    } catch (err) {
      const backoff = Math.min(1000 * 2 ** entry.attempts, MAX_BACKOFF_MS);
      // If this attempt outlived its hold, the lease runs out instead and the next pass retries.
      await advance(entry, { dueAt: new Date(Date.now() + backoff), lastError: String((err as Error).message) });
      logger.warn(
        { key: entry.key, attempts: entry.attempts, err: String((err as Error).message) },
        'release failed; will retry',
      );
      return false;
    }
  }

  return {
    async enqueue(noteId: Types.ObjectId, ownerId: string, key: string): Promise<PendingRelease> {
      return (await pending.create({ noteId, ownerId, key })).toObject();
    },

    /** The owner's account was deleted, and files deletes its objects: nothing is owed any more. */
    async dropAllOf(ownerId: string): Promise<void> {
      await pending.deleteMany({ ownerId });
    },

    /** Tries one entry now, without making the caller wait for files or storage. */
    releaseSoon(entry: PendingRelease): void {
      void take({ ...entry, readAt: Date.now() })
        .then((taken) => taken && attempt(taken))
        .catch((err: unknown) => logger.warn({ err }, 'immediate release failed; the outbox will retry'));
    },

    /** How many releases wait, and since when the oldest does. */
    backlog: () => backlogOf(pending),

    /** Processes due entries (at most `limit`), oldest first; returns how many were released or dropped. */
    async drain(limit = 100): Promise<number> {
      let done = 0;
      let tried = 0;
      while (tried < limit) {
        const readAt = Date.now();
        const due = await pending
          .find({ dueAt: trusted({ $lte: new Date(readAt) }) })
          .sort({ dueAt: 1 })
          .limit(Math.min(BATCH, limit - tried))
          .lean<PendingRelease[]>();
        let taken = 0;
        for (const entry of due) {
          const mine = await take({ ...entry, readAt });
          if (!mine) continue;
          taken += 1;
          tried += 1;
          if (await attempt(mine)) done += 1;
        }
        // Nothing due, or everything due was taken by another worker: this pass is done.
        if (taken === 0) break;
      }
      return done;
    },
  };
}

export type ReleaseOutbox = ReturnType<typeof createReleaseOutbox>;
