/**
 * Attachments the check removed (sweeper.ts `checkExpiredLinks`): the note that held the key must
 * hear of it, and files cannot write notes' database. An outbox of `@cs/outbox`, one entry per
 * key (`_id` is the key): the check writes the entry, then takes the record to `released` with
 * the reason, deleting the object, then dispatches the entry. A process that dies anywhere after
 * the entry leaves it to the next poll. Notes' route is idempotent, so a second telling is
 * harmless.
 *
 * The handler settles the entry against the record (the recipe's second way): it tells notes
 * once the record is released with a reason, or gone (purged later, so released long ago). A
 * record still live has not had its removal land: tried again while the entry is young, dropped
 * once it is settled (another replica's check kept the object, or the process died before).
 */
import type { Logger } from '@cs/log';
import { createOutbox, isSettled } from '@cs/outbox';
import type { UploadModel, UploadRecord } from '../uploads/model';
import type { AttachmentRemoval, AttachmentRemovalModel } from './model';
import type { NotesClient } from './notes-client';

export function createRemovals({
  entries,
  model,
  notes,
  logger,
}: {
  entries: AttachmentRemovalModel;
  model: UploadModel;
  notes: NotesClient;
  logger: Logger;
}) {
  const outbox = createOutbox({
    name: 'attachment_removals',
    entries,
    what: 'telling notes of a removed attachment',
    logger,
    async handle(entry) {
      const record = await model
        .findOne({ key: entry._id }, 'state removedReason')
        .lean<Pick<UploadRecord, 'state' | 'removedReason'>>();
      const removed = !record || (record.state === 'released' && record.removedReason);
      if (!removed) {
        if (isSettled(entry)) return;
        throw new Error('the removal has not landed yet');
      }
      await notes.attachmentRemoved(entry.ownerId, entry._id, entry.reason);
    },
  });

  return {
    /** Records that the note holding `key` is to be told, before the removal (see `@cs/outbox`). */
    announce: (key: string, ownerId: string, reason: string) => outbox.enqueue({ _id: key, ownerId, reason }),
    /** Tells notes now, in the background, once the removal is written. */
    tellSoon: (entry: AttachmentRemoval) => outbox.dispatch(entry),
    /** Polls for removals no live process told every `intervalMs`; returns the function that stops it. */
    start: (intervalMs: number) => outbox.start(intervalMs),
  };
}

export type Removals = ReturnType<typeof createRemovals>;
