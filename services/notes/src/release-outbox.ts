/**
 * Releases the notes service owes the files service, kept in its own database until files
 * confirms. A note's deletion writes the entry and returns; the release happens right after, or
 * on a later pass when files or storage is away. Entries are taken with a lease, so several
 * replicas (or the immediate attempt and the timer) never release one key twice at once.
 */
import { signToken } from '@cs/auth';
import type { Logger } from '@cs/log';
import { trusted } from '@cs/mongo';
import type { Types } from 'mongoose';
import type { FilesClient } from './files-client';
import type { NoteModel, PendingRelease, PendingReleaseModel } from './model';

const LEASE_MS = 30_000;
const MAX_BACKOFF_MS = 60_000;

export function createReleaseOutbox({
  pending,
  notes,
  files,
  secret,
  logger,
}: {
  pending: PendingReleaseModel;
  notes: NoteModel;
  files: FilesClient;
  secret: string;
  logger: Logger;
}) {
  /** Takes one due entry (a given one, or the oldest) for LEASE_MS. */
  function take(id?: Types.ObjectId) {
    const now = Date.now();
    const due = { dueAt: trusted({ $lte: new Date(now) }) };
    return pending
      .findOneAndUpdate(
        id ? { _id: id, ...due } : due,
        { $set: { dueAt: new Date(now + LEASE_MS) }, $inc: { attempts: 1 } },
        { returnDocument: 'after', sort: { dueAt: 1 } },
      )
      .lean<PendingRelease>();
  }

  async function attempt(entry: PendingRelease): Promise<boolean> {
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
      await pending.updateOne(
        { _id: entry._id },
        { $set: { dueAt: new Date(Date.now() + backoff), lastError: String((err as Error).message) } },
      );
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

    /** Tries one entry now, without making the caller wait for files or storage. */
    releaseSoon(entry: PendingRelease): void {
      void take(entry._id)
        .then((taken) => taken && attempt(taken))
        .catch((err: unknown) => logger.warn({ err }, 'immediate release failed; the outbox will retry'));
    },

    /** Processes every due entry (at most `limit`); returns how many were released or dropped. */
    async drain(limit = 100): Promise<number> {
      let done = 0;
      for (let i = 0; i < limit; i++) {
        const entry = await take();
        if (!entry) break;
        if (await attempt(entry)) done += 1;
      }
      return done;
    },
  };
}

export type ReleaseOutbox = ReturnType<typeof createReleaseOutbox>;

/** Drains the outbox every `intervalMs`; a pass never overlaps the previous one. */
export function startOutbox(outbox: ReleaseOutbox, intervalMs: number, logger: Logger): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(() => outbox.drain().catch((err: unknown) => logger.warn({ err }, 'outbox pass failed')));
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
