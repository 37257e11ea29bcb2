/**
 * Releases the notes service owes the files service, kept in its own database until files
 * confirms: an outbox of `@cs/outbox`. A note's deletion (or a key replaced) writes the entry and
 * returns; the release happens right after, or on a later try when files or storage is away.
 * Handling an entry twice is harmless (files' release is idempotent); a key that a note holds is
 * never released (the recipe's second way, `@cs/outbox` isSettled).
 */
import { signToken } from '@cs/auth';
import type { Logger } from '@cs/log';
import { createOutbox, isSettled } from '@cs/outbox';
import type { Types } from 'mongoose';
import type { FilesClient } from './files-client';
import type { NoteModel, PendingRelease, PendingReleaseModel } from './model';

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
  const outbox = createOutbox({
    name: 'note_releases',
    entries: pending,
    what: 'release',
    logger,
    async handle(entry) {
      const { noteId, ownerId, key } = entry;
      // A note that holds the key needs the object: the write that let it go has not landed yet
      // (tried again), or never will, or the key is held again (nothing to release).
      if (await notes.exists({ _id: noteId, attachmentKey: key })) {
        if (isSettled(entry)) return;
        throw new Error('a note still holds the key; its write may not have landed yet');
      }
      // On behalf of the note's owner: files checks the key is theirs, as for any caller.
      const token = signToken(ownerId, { secret, expiresIn: '5m' });
      await files.release(key, `Bearer ${token}`);
    },
  });

  return {
    /** Records the release of `key`, before the write that lets it go (see `@cs/outbox`). */
    enqueue(noteId: Types.ObjectId, ownerId: string, key: string): Promise<PendingRelease> {
      return outbox.enqueue({ noteId, ownerId, key });
    },

    /** The owner's account was deleted, and files deletes its objects: nothing is owed any more. */
    async dropAllOf(ownerId: string): Promise<void> {
      await pending.deleteMany({ ownerId });
    },

    /** Tries one entry now (its write is done), without making the caller wait for files or storage. */
    releaseSoon: (entry: PendingRelease) => outbox.dispatch(entry),
    /** How many releases wait, and since when the oldest does. */
    backlog: () => outbox.backlog(),
    /** Polls for due entries every `intervalMs`; returns the function that stops it. */
    start: (intervalMs: number) => outbox.start(intervalMs),
  };
}

export type ReleaseOutbox = ReturnType<typeof createReleaseOutbox>;
