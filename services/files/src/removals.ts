/**
 * Attachments the check removed (sweeper.ts `checkExpiredLinks`): the note that held the key must
 * hear of it, and files cannot write notes' database. The upload record is the outbox entry: the
 * check writes `notesToTell` and the reason in the same write that takes the record into
 * `releasing`, before the object is deleted, so a process that dies anywhere after leaves the
 * entry for the next pass. Delivery is at least once (in the pass that removed the object, then in
 * every pass until notes answers 204), which notes' idempotent route makes harmless; the record is
 * purged only once notes has heard.
 */
import type { UploadModel, UploadRecord } from './model';
import type { NotesClient } from './notes-client';
import { eachAtMost } from './sweep-pace';

const BATCH = 20;

export function createRemovals({ model, notes }: { model: UploadModel; notes: NotesClient }) {
  async function tell({ key, ownerId, removedReason }: Pick<UploadRecord, 'key' | 'ownerId' | 'removedReason'>) {
    await notes.attachmentRemoved(ownerId, key, removedReason ?? 'removed');
    // Only this field changes once a record is released: a plain update cannot undo another write.
    await model.updateOne({ key, state: 'released' }, { $set: { notesToTell: false } });
  }

  return {
    /**
     * Tells notes of every removal it has not confirmed, until none is left (sweep-pace.ts);
     * released records only (a release under way finishes first). Notes not answering ends the pass.
     */
    async drain(): Promise<number> {
      let told = 0;
      for (;;) {
        const due = await model
          .find({ notesToTell: true, state: 'released' }, 'key ownerId removedReason')
          .limit(BATCH)
          .lean<Pick<UploadRecord, 'key' | 'ownerId' | 'removedReason'>[]>();
        await eachAtMost(due, tell);
        told += due.length;
        if (due.length < BATCH) return told;
      }
    },
  };
}

export type Removals = ReturnType<typeof createRemovals>;
