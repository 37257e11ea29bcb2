import { modelOf } from '@cs/mongo';
import { type OutboxEntry, withOutboxFields } from '@cs/outbox';
import { type Connection, type Model, Schema, type Types } from 'mongoose';
import type { Attachment } from './files-client';

export interface NoteRecord {
  _id: Types.ObjectId;
  title: string;
  body: string;
  attachmentKey: string | null;
  /** What the key holds, as the claim found it; null without a key, and on notes claimed before it was kept. */
  attachment?: Attachment | null;
  authorId: Types.ObjectId;
  /** Set when the files service removed the attachment's object after the claim (it broke a rule). */
  attachmentRemoved?: AttachmentRemoved | null;
  createdAt: Date;
  updatedAt: Date;
  /** Every write to a note is its next version, taken as a turn (see notes.ts). */
  version?: number;
}

/** Why a note lost its attachment: the files service removed the object, for `reason`, `at` then. */
export interface AttachmentRemoved {
  key: string;
  reason: string;
  at: Date;
}

export interface Note {
  _id: string;
  title: string;
  body: string;
  attachmentKey: string | null;
  attachment: Attachment | null;
  authorId: string;
  /** Only on a note whose attachment the files service removed; gone once another key is set. */
  attachmentRemoved?: { key: string; reason: string; at: string };
  createdAt: string;
  updatedAt: string;
}

/**
 * Lengths and formats are the request schemas' (`@cs/contract`), checked before anything is
 * written: they are the one source of truth, and they count characters as JSON Schema does.
 */
const noteSchema = new Schema<NoteRecord>(
  {
    title: { type: String, required: true, trim: true },
    body: { type: String, default: '' },
    attachmentKey: { type: String, default: null },
    attachment: {
      type: new Schema<Attachment>(
        {
          filename: { type: String, required: true },
          size: { type: Number, required: true },
          contentType: { type: String, required: true },
        },
        { _id: false, versionKey: false, strict: 'throw' },
      ),
      default: null,
    },
    authorId: { type: Schema.Types.ObjectId, required: true, immutable: true },
    attachmentRemoved: {
      type: new Schema<AttachmentRemoved>(
        {
          key: { type: String, required: true },
          reason: { type: String, required: true },
          at: { type: Date, required: true },
        },
        { _id: false, versionKey: false, strict: 'throw' },
      ),
      default: undefined,
    },
    version: { type: Number, default: 0 },
  },
  { timestamps: true, versionKey: false, strict: 'throw' },
);
noteSchema.index({ authorId: 1, createdAt: -1, _id: -1 });
// The note that holds a key, when files reports its object removed.
noteSchema.index({ attachmentKey: 1 });

/**
 * A release the notes service owes the files service: the note that held the key is gone (or
 * points elsewhere), so its object must be deleted. Kept until files confirms.
 */
export interface PendingRelease extends OutboxEntry {
  _id: Types.ObjectId;
  key: string;
  ownerId: string;
  noteId: Types.ObjectId;
  /** Every take and every write of an entry is its next version, taken as a turn. */
  version?: number;
}

const pendingReleaseSchema = withOutboxFields(
  new Schema<PendingRelease>(
    {
      key: { type: String, required: true },
      ownerId: { type: String, required: true },
      noteId: { type: Schema.Types.ObjectId, required: true },
      version: { type: Number, default: 0 },
    },
    { versionKey: false, strict: 'throw' },
  ),
);
// A deleted account's entries.
pendingReleaseSchema.index({ ownerId: 1 });

export type NoteModel = Model<NoteRecord>;
export type PendingReleaseModel = Model<PendingRelease>;

export function noteModel(connection: Connection): NoteModel {
  return modelOf(connection, 'Note', noteSchema);
}

export function pendingReleaseModel(connection: Connection): PendingReleaseModel {
  return modelOf(connection, 'PendingRelease', pendingReleaseSchema);
}

export const NOTE_FIELDS =
  '_id title body attachmentKey attachment attachmentRemoved authorId createdAt updatedAt version';

export function toNote(record: NoteRecord): Note {
  return {
    _id: record._id.toHexString(),
    title: record.title,
    body: record.body,
    attachmentKey: record.attachmentKey ?? null,
    attachment:
      record.attachmentKey && record.attachment
        ? {
            filename: record.attachment.filename,
            size: record.attachment.size,
            contentType: record.attachment.contentType,
          }
        : null,
    authorId: record.authorId.toHexString(),
    ...(record.attachmentRemoved && {
      attachmentRemoved: {
        key: record.attachmentRemoved.key,
        reason: record.attachmentRemoved.reason,
        at: record.attachmentRemoved.at.toISOString(),
      },
    }),
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  };
}

/**
 * A change event the notes service owes the bus (note-events.ts), written before its write: an
 * outbox entry of `@cs/outbox`. `_id` names the write (`<noteId>:v<version>`, or `<noteId>:gone`).
 */
export interface NoteEventRecord extends OutboxEntry {
  _id: string;
  noteId: string;
  authorId: string;
  /** The note's version once the write lands; null for a deletion. */
  version: number | null;
}

const noteEventSchema = withOutboxFields(
  new Schema<NoteEventRecord>(
    {
      _id: { type: String, required: true },
      noteId: { type: String, required: true },
      authorId: { type: String, required: true },
      version: { type: Number, default: null },
    },
    { versionKey: false, strict: 'throw', collection: 'note_events' },
  ),
);

export type NoteEventModel = Model<NoteEventRecord>;

export function noteEventModel(connection: Connection): NoteEventModel {
  return modelOf(connection, 'NoteEvent', noteEventSchema);
}
