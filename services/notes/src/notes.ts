/**
 * The notes domain. Attachments are claimed through the files service before a note points at
 * them, and every key a note stops pointing at (replaced, removed, note deleted) goes through
 * the release outbox, so no object outlives its note for long.
 */
import { HttpError } from '@cs/errors';
import { Types } from 'mongoose';
import type { FilesClient } from './files-client';
import { NOTE_FIELDS, type Note, type NoteModel, type NoteRecord, toNote } from './model';
import type { ReleaseOutbox } from './release-outbox';
import { messages } from './schemas';

export interface NoteInput {
  title: string;
  body: string;
  attachmentKey: string | null;
}

export type NoteChanges = Partial<NoteInput>;

function notFound(): HttpError {
  return new HttpError(404, messages.notFound);
}

export function createNotes({ notes, files, outbox }: { notes: NoteModel; files: FilesClient; outbox: ReleaseOutbox }) {
  async function releaseLater(noteId: Types.ObjectId, ownerId: string, key: string): Promise<void> {
    outbox.releaseSoon(await outbox.enqueue(noteId, ownerId, key));
  }

  return {
    async create(authorId: string, input: NoteInput, authorization: string): Promise<Note> {
      const _id = new Types.ObjectId();
      if (input.attachmentKey) await files.claim(input.attachmentKey, authorization);
      try {
        const record = await notes.create({ _id, ...input, authorId });
        return toNote(record.toObject());
      } catch (err) {
        if (input.attachmentKey) await releaseLater(_id, authorId, input.attachmentKey);
        throw err;
      }
    },

    async list(authorId: string): Promise<Note[]> {
      const records = await notes.find({ authorId }, NOTE_FIELDS).sort({ createdAt: -1, _id: -1 }).lean<NoteRecord[]>();
      return records.map(toNote);
    },

    async get(id: string, authorId: string): Promise<Note> {
      const record = await notes.findOne({ _id: id, authorId }, NOTE_FIELDS).lean<NoteRecord>();
      if (!record) throw notFound();
      return toNote(record);
    },

    /**
     * A new key is claimed first; the note is then updated only if its key is still the one we
     * read, so two racing updates cannot both replace it. The old key is released after.
     */
    async update(id: string, authorId: string, changes: NoteChanges, authorization: string): Promise<Note> {
      const current = await notes.findOne({ _id: id, authorId }, NOTE_FIELDS).lean<NoteRecord>();
      if (!current) throw notFound();
      const previousKey = current.attachmentKey ?? null;
      const nextKey = changes.attachmentKey;
      const keyChanges = nextKey !== undefined && nextKey !== previousKey;
      if (keyChanges && nextKey) await files.claim(nextKey, authorization);

      const updated = await notes
        .findOneAndUpdate(
          { _id: id, authorId, attachmentKey: previousKey },
          { $set: changes },
          { returnDocument: 'after', runValidators: true },
        )
        .lean<NoteRecord>();
      if (!updated) {
        if (keyChanges && nextKey) await releaseLater(current._id, authorId, nextKey);
        throw new HttpError(409, 'The note changed at the same time; try again');
      }
      if (keyChanges && previousKey) await releaseLater(current._id, authorId, previousKey);
      return toNote(updated);
    },

    /** The note goes at once; its object is released right after, or later by the outbox. */
    async remove(id: string, authorId: string): Promise<void> {
      const current = await notes.findOne({ _id: id, authorId }, NOTE_FIELDS).lean<NoteRecord>();
      if (!current) throw notFound();
      const entry = current.attachmentKey
        ? await outbox.enqueue(current._id, authorId, current.attachmentKey)
        : undefined;
      await notes.deleteOne({ _id: id, authorId });
      if (entry) outbox.releaseSoon(entry);
    },

    async attachmentLink(id: string, authorId: string, authorization: string) {
      const current = await notes.findOne({ _id: id, authorId }, NOTE_FIELDS).lean<NoteRecord>();
      if (!current) throw notFound();
      if (!current.attachmentKey) throw new HttpError(404, messages.noAttachment);
      return files.downloadLink(current.attachmentKey, authorization);
    },
  };
}

export type Notes = ReturnType<typeof createNotes>;
