import { modelOf } from '@cs/mongo';
import { type Connection, type Model, Schema } from 'mongoose';

/**
 * attached → releasing → released. A sized single-PUT upload's record is written at its claim, as
 * attached; a size-less link's and a multipart upload's at issue, as issued: issued → attached,
 * or issued → releasing (aborted, swept, or refused by the check after its link expired) → released.
 */
export const UPLOAD_STATES = ['issued', 'attached', 'releasing', 'released'] as const;
export type UploadState = (typeof UPLOAD_STATES)[number];

/** A file sent in parts: storage's upload id stays here, the client knows the upload by `id`. */
export interface MultipartRecord {
  /** The upload's id in our routes: the UUID of its key. */
  id: string;
  storageUploadId: string;
  partSize: number;
  partCount: number;
  /** When storage joined the parts into the object; null while parts are still coming. */
  completedAt: Date | null;
}

export interface UploadRecord {
  key: string;
  ownerId: string;
  contentType: string;
  /**
   * The name the file is downloaded under (file-name.ts), from the upload request: recorded at
   * issue (size-less link, multipart), or signed into the object until the claim (link with size,
   * object-rules.ts). Null on records written before names were kept.
   */
  filename?: string | null;
  /**
   * Declared at issue, and the object's size must equal it. Null for a size-less link: the object
   * may be anything up to the upload limit (checked at the claim and after the link expires).
   */
  size: number | null;
  multipart: MultipartRecord | null;
  state: UploadState;
  issuedAt: Date;
  attachedAt: Date | null;
  releasedAt: Date | null;
  /**
   * When a released record is removed, its key's object deleted once more first: after every link
   * that could put it back has expired, plus the retention period.
   */
  purgeAfter: Date | null;
  /** A worker holding the record (sweeper or release) until then; others leave it alone. */
  lockedUntil: Date;
  attempts: number;
  /**
   * A size-less link's key is checked once its link has expired, from this time on (the object
   * can no longer change); null once checked, and on every other record.
   */
  checkAfter?: Date | null;
  /** Why the check removed the object of an attached key; the note that held it is told (removals.ts). */
  removedReason?: string | null;
  /** Every state change is the next version, taken as a turn (see records.ts). */
  version?: number;
}

const uploadSchema = new Schema<UploadRecord>(
  {
    key: { type: String, required: true },
    ownerId: { type: String, required: true },
    contentType: { type: String, required: true },
    filename: { type: String, default: null },
    size: { type: Number, default: null },
    multipart: {
      type: new Schema<MultipartRecord>(
        {
          id: { type: String, required: true },
          storageUploadId: { type: String, required: true },
          partSize: { type: Number, required: true },
          partCount: { type: Number, required: true },
          completedAt: { type: Date, default: null },
        },
        { _id: false, versionKey: false, strict: 'throw' },
      ),
      default: null,
    },
    state: { type: String, enum: UPLOAD_STATES, required: true, default: 'issued' },
    issuedAt: { type: Date, required: true },
    attachedAt: { type: Date, default: null },
    releasedAt: { type: Date, default: null },
    purgeAfter: { type: Date, default: null },
    lockedUntil: { type: Date, required: true, default: () => new Date(0) },
    attempts: { type: Number, required: true, default: 0 },
    checkAfter: { type: Date, default: null },
    removedReason: { type: String, default: null },
    version: { type: Number, required: true, default: 0 },
  },
  { versionKey: false, strict: 'throw' },
);

uploadSchema.index({ key: 1 }, { unique: true });
// The sweeper's two queries: stale issued keys, and releases to finish.
uploadSchema.index({ state: 1, issuedAt: 1 });
uploadSchema.index({ state: 1, lockedUntil: 1 });
uploadSchema.index({ state: 1, purgeAfter: 1 });
// A deleted account's records; an account's uploads not yet attached, oldest first (unclaimed-budget.ts).
uploadSchema.index({ ownerId: 1 });
uploadSchema.index({ ownerId: 1, state: 1, issuedAt: 1 });
// The check of size-less links once they expire.
uploadSchema.index({ checkAfter: 1 });
// A multipart upload is found by its id; unique because it is its key's UUID.
uploadSchema.index({ 'multipart.id': 1 }, { sparse: true });

export type UploadModel = Model<UploadRecord>;

export function uploadModel(connection: Connection): UploadModel {
  return modelOf(connection, 'Upload', uploadSchema);
}
