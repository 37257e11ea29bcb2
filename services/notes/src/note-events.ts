/**
 * The change events of notes, for the realtime service's `notes` topic: every write of a note is
 * told to its author on the event bus (@cs/event-bus) once it has committed, even when this
 * process dies right after the commit. The same recipe as posts' (services/posts post-events.ts):
 * the entry first, with the note's next version, then the write, then the entry tried at once.
 *
 * The handler tells the note as it is (as the write wrote it, when its dispatch says: then with no
 * read) once that shows the write: `notes.upsert` with the note as
 * GET answers it, or `notes.remove` once it is gone. A note still at an earlier version (the write
 * has not landed yet) is tried again until the write has landed or never will. Entries of one note
 * go in order; each event's key names the note's version (or its end), so an entry handled twice,
 * or two that find the same version, publish one event.
 */
import type { LiveEvent } from '@cs/contract';
import type { EventBus } from '@cs/event-bus';
import type { Logger } from '@cs/log';
import { createOutbox, isSettled, previousEntryId, writeEntryId } from '@cs/outbox';
import {
  NOTE_FIELDS,
  type Note,
  type NoteEventModel,
  type NoteEventRecord,
  type NoteModel,
  type NoteRecord,
  toNote,
} from './model';

/** The events of notes, in the live-update vocabulary (@cs/contract): on `notes`. */
type NoteEvent = Extract<LiveEvent<unknown, Note>, { topic: 'notes' }>;

export function createNoteEvents({
  entries,
  notes,
  bus,
  logger,
}: {
  entries: NoteEventModel;
  notes: NoteModel;
  bus: EventBus;
  logger: Logger;
}) {
  /** Puts an event on the bus, once for `key`. */
  const tell = (event: NoteEvent, key: string) => bus.publish(event, key);
  const outbox = createOutbox<NoteEventRecord, NoteRecord>({
    name: 'note_events',
    entries,
    what: 'note event',
    orderBy: 'noteId',
    logger,
    async handle(entry, asWritten) {
      const { noteId, authorId } = entry;
      // A null may not be stored at all (the outbox writes entries with $setOnInsert).
      const written = entry.version ?? null;
      const record = asWritten ?? (await notes.findById(noteId, NOTE_FIELDS).lean<NoteRecord>());
      if (!record) {
        // Created and not there yet: tried again. Otherwise it is gone (this write, or a later one).
        if (written !== null && !isSettled(entry)) throw new Error('the note is not there yet');
        await tell({ topic: 'notes', kind: 'remove', owner: authorId, data: { _id: noteId } }, `${noteId}:gone`);
        return;
      }
      const version = record.version ?? 0;
      if (written === null || version < written) {
        if (isSettled(entry)) return;
        throw new Error('the note does not show the write yet');
      }
      await tell({ topic: 'notes', kind: 'upsert', owner: authorId, data: toNote(record) }, `${noteId}:v${version}`);
    },
  });

  return {
    /** Records a write of note `noteId` before it is made: `version` once it lands, null for a deletion. */
    record(noteId: string, authorId: string, version: number | null): Promise<NoteEventRecord> {
      return outbox.enqueue({
        _id: writeEntryId(noteId, version),
        noteId,
        authorId,
        version,
      });
    },
    /**
     * Tries an entry now, in the background: its write is done, and wrote `written` (told as it
     * is, without a read), a new note when `created`.
     */
    dispatch: (entry: NoteEventRecord, written?: NoteRecord, { created = false } = {}) =>
      outbox.dispatch(entry, { written, first: created, after: previousEntryId(entry.noteId, entry.version) }),
    /** Polls for entries no live process tried; returns the function that stops it. */
    start: (intervalMs: number) => outbox.start(intervalMs),
  };
}

export type NoteEvents = ReturnType<typeof createNoteEvents>;
