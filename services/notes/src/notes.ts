/**
 * The notes domain. Attachments are claimed through the files service before a note points at
 * them, and every key a note stops pointing at (replaced, removed, note deleted) goes through
 * the release outbox, so no object outlives its note for long.
 *
 * Writes to an existing note go through `ownedDocuments` (`@cs/mongo`): of an update and a
 * delete racing for one note, or two updates, one writes and the other reads again and decides
 * from what it finds. So a key is never replaced, or deleted with its note, without being
 * released, on FerretDB as on MongoDB.
 *
 * Every write is told on the event bus too (note-events.ts): its entry is written right before
 * it, with the version it writes, and tried right after it.
 */
import { HttpError } from '@cs/errors';
import type { PageQuery } from '@cs/koa';
import {
  type Cursor,
  findPage,
  insertTogether,
  ownedDocuments,
  type Page,
  type SearchPageQuery,
  searchPage,
  type Turns,
} from '@cs/mongo';
import type { SearchQuery } from '@cs/search';
import { Types } from 'mongoose';
import type { FilesClient } from './files-client';
import { messages } from './messages';
import { NOTE_FIELDS, type Note, type NoteModel, type NoteRecord, toNote } from './model';
import type { NoteEvents } from './note-events';
import type { ReleaseOutbox } from './release-outbox';

/** What a search of notes reads (a note's title and body), and a match in the title counts twice. */
const NOTE_SEARCH = {
  boosts: { title: 2, body: 1 },
  texts: (record: NoteRecord) => ({ title: record.title, body: record.body }),
} as const;

export interface NoteInput {
  title: string;
  body: string;
  attachmentKey: string | null;
}

export type NoteChanges = Partial<NoteInput>;

function notFound(): HttpError {
  return new HttpError(404, messages.notFound);
}

function concurrentChange(): HttpError {
  return new HttpError(409, messages.concurrentChange);
}

export function createNotes({
  notes,
  files,
  outbox,
  events,
  turns,
}: {
  notes: NoteModel;
  files: FilesClient;
  outbox: ReleaseOutbox;
  events: NoteEvents;
  turns: Turns;
}) {
  /** New notes, inserted with those created in the same turn (group commit). */
  const insert = insertTogether(notes);
  const owned = ownedDocuments(notes, turns, {
    subject: 'note',
    owner: 'authorId',
    fields: NOTE_FIELDS,
    missing: notFound,
    busy: concurrentChange,
  });

  /** The event entry of an update, written right before it (ownedDocuments' `prepare`). */
  const tell = (id: string, authorId: string) => (_current: NoteRecord, _change: unknown, version: number) =>
    events.record(id, authorId, version);

  async function releaseLater(noteId: Types.ObjectId, ownerId: string, key: string): Promise<void> {
    outbox.releaseSoon(await outbox.enqueue(noteId, ownerId, key));
  }

  return {
    /** Everything is checked before the key is claimed, so a refused note never holds one. */
    async create(authorId: string, input: NoteInput, authorization: string): Promise<Note> {
      const record = new notes({ _id: new Types.ObjectId(), ...input, authorId });
      await record.validate();
      if (input.attachmentKey) record.attachment = await files.claim(input.attachmentKey, authorization);
      try {
        const told = await events.record(record._id.toHexString(), authorId, 0);
        await insert(record);
        const written = record.toObject() as NoteRecord;
        events.dispatch(told, written, { created: true });
        return toNote(written);
      } catch (err) {
        if (input.attachmentKey) await releaseLater(record._id, authorId, input.attachmentKey);
        throw err;
      }
    },

    /** One page of the caller's notes, newest first, and the cursor after it when there are more. */
    async list(authorId: string, query: PageQuery<Cursor>): Promise<Page<Note>> {
      return findPage(notes, { authorId }, NOTE_FIELDS, query, toNote);
    },

    /** One page of the caller's notes that match `search` (title and body), best first. */
    async search(authorId: string, search: SearchQuery, page: SearchPageQuery): Promise<Page<Note>> {
      return searchPage(notes, { authorId }, { fields: NOTE_FIELDS, query: search, ...NOTE_SEARCH }, page, toNote);
    },

    async get(id: string, authorId: string): Promise<Note> {
      const record = await owned.find(id, authorId);
      if (!record) throw notFound();
      return toNote(record);
    },

    /**
     * A new key is claimed once, before the write. The release of the key the note holds is
     * written before the write too (the outbox's recipe: the intent first, so a process that dies
     * in between loses no release; the outbox never releases a key a note still holds) and sent
     * once the write is done. A write that cannot happen (the note is gone, or stayed busy through
     * every retry) releases the new key instead.
     */
    async update(id: string, authorId: string, changes: NoteChanges, authorization: string): Promise<Note> {
      await notes.validate(changes, Object.keys(changes));
      const nextKey = changes.attachmentKey;
      const readAt = Date.now();
      const first = await owned.find(id, authorId);
      if (!first) throw notFound();
      const claimed = typeof nextKey === 'string' && nextKey !== first.attachmentKey;
      const attachment = claimed ? await files.claim(nextKey, authorization) : null;
      const keyChangesFrom = (current: NoteRecord) =>
        nextKey !== undefined && nextKey !== (current.attachmentKey ?? null);
      const held = keyChangesFrom(first) ? first.attachmentKey : undefined;
      const release = held ? await outbox.enqueue(first._id, authorId, held) : undefined;
      try {
        const { before, after, prepared } = await owned.update(
          id,
          authorId,
          (current) => {
            // The note held this key when we began, and another write has replaced it since.
            if (keyChangesFrom(current) && nextKey && !claimed) throw concurrentChange();
            // A note given another key (or none) no longer says why its last one was removed.
            const forget = nextKey !== undefined && current.attachmentRemoved;
            // What the new key holds goes with it (none, when the key is removed).
            const set = keyChangesFrom(current) ? { ...changes, attachment } : changes;
            return { set, unset: forget ? ['attachmentRemoved'] : [] };
          },
          tell(id, authorId),
          // The write starts from the read above, which decided the claim: a change since is
          // found by the write's version filter, and read again then.
          { doc: first, readAt },
        );
        if (prepared) events.dispatch(prepared, after);
        if (keyChangesFrom(before) && before.attachmentKey) {
          // Another write may have replaced the key we began with: then this one releases its key.
          if (release && before.attachmentKey === held) outbox.releaseSoon(release);
          else await releaseLater(before._id, authorId, before.attachmentKey);
        }
        return toNote(after);
      } catch (err) {
        if (!claimed) throw err;
        // The note never took the new key (404, 409): it goes back at once. After a failure of the
        // database, in the background (that database must not hold the answer longer), and safe
        // even if the write landed after all: the outbox never releases a key a note holds.
        if (err instanceof HttpError) await releaseLater(first._id, authorId, nextKey);
        else void releaseLater(first._id, authorId, nextKey).catch(() => undefined);
        throw err;
      }
    },

    /**
     * The note goes at once; the key it held then is released right after, or later by the
     * outbox (its entry is written before the note goes). Done whether or not the caller had such
     * a note, as a post's delete is: a DELETE sent again (by a balancer whose replica died after
     * deleting, or by a client that lost the answer) answers 204 as the first did, and another
     * user's note is left alone without saying it exists.
     */
    async remove(id: string, authorId: string): Promise<void> {
      const done = await owned.remove(id, authorId, async (current) => ({
        // Written before each try: one whose delete did not land is dropped while a note holds the key.
        release: current.attachmentKey ? await outbox.enqueue(current._id, authorId, current.attachmentKey) : undefined,
        told: await events.record(id, authorId, null),
      }));
      if (done?.prepared?.release) outbox.releaseSoon(done.prepared.release);
      if (done?.prepared) events.dispatch(done.prepared.told);
    },

    /**
     * The author's account was deleted: every note of theirs, and their pending releases. Nothing
     * is released: the files service deletes the account's objects itself. Idempotent.
     */
    async removeAllBy(authorId: string): Promise<void> {
      await notes.deleteMany({ authorId });
      await outbox.dropAllOf(authorId);
    },

    /**
     * The files service removed the object of `key` after the caller's note claimed it (it broke
     * an upload rule): the note that holds it lets it go and says why. Nothing is released: files
     * removed the object itself. Idempotent: a note that no longer holds the key is left alone.
     */
    async attachmentRemoved(authorId: string, key: string, reason: string): Promise<void> {
      const holder = await notes.findOne({ authorId, attachmentKey: key }, '_id').lean<Pick<NoteRecord, '_id'>>();
      if (!holder) return;
      const noteId = holder._id.toHexString();
      const { prepared, after } = await owned
        .update(
          noteId,
          authorId,
          (current) =>
            current.attachmentKey === key
              ? { set: { attachmentKey: null, attachment: null, attachmentRemoved: { key, reason, at: new Date() } } }
              : undefined,
          tell(noteId, authorId),
        )
        .catch((err: unknown) => {
          if (!(err instanceof HttpError && err.status === 404)) throw err;
          return { prepared: undefined, after: undefined };
        });
      if (prepared) events.dispatch(prepared, after);
    },

    /** The attachment's download link, or with `thumb` (a size files allows) its thumbnail's. */
    async attachmentLink(id: string, authorId: string, authorization: string, thumb?: string) {
      const current = await owned.find(id, authorId);
      if (!current) throw notFound();
      if (!current.attachmentKey) throw new HttpError(404, messages.noAttachment);
      if (thumb) return files.thumbnailLink(current.attachmentKey, thumb, authorization);
      return files.downloadLink(current.attachmentKey, authorization);
    },
  };
}

export type Notes = ReturnType<typeof createNotes>;
