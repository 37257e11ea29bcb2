import { type Connection, type Model, Schema } from 'mongoose';

/** issued → attached → releasing → released; issued → releasing (swept) → released. */
export const UPLOAD_STATES = ['issued', 'attached', 'releasing', 'released'] as const;
export type UploadState = (typeof UPLOAD_STATES)[number];

export interface UploadRecord {
  key: string;
  ownerId: string;
  contentType: string;
  size: number | null;
  state: UploadState;
  issuedAt: Date;
  attachedAt: Date | null;
  releasedAt: Date | null;
  /** A worker holding the record (sweeper or release) until then; others leave it alone. */
  lockedUntil: Date;
  attempts: number;
  /** Every state change is the next version, taken as a turn (see uploads.ts). */
  version?: number;
}

const uploadSchema = new Schema<UploadRecord>(
  {
    key: { type: String, required: true },
    ownerId: { type: String, required: true },
    contentType: { type: String, required: true },
    size: { type: Number, default: null },
    state: { type: String, enum: UPLOAD_STATES, required: true, default: 'issued' },
    issuedAt: { type: Date, required: true },
    attachedAt: { type: Date, default: null },
    releasedAt: { type: Date, default: null },
    lockedUntil: { type: Date, required: true, default: () => new Date(0) },
    attempts: { type: Number, required: true, default: 0 },
    version: { type: Number, required: true, default: 0 },
  },
  { versionKey: false, strict: 'throw' },
);

uploadSchema.index({ key: 1 }, { unique: true });
// The sweeper's two queries: stale issued keys, and releases to finish.
uploadSchema.index({ state: 1, issuedAt: 1 });
uploadSchema.index({ state: 1, lockedUntil: 1 });

export type UploadModel = Model<UploadRecord>;

export function uploadModel(connection: Connection): UploadModel {
  return (
    (connection.models.Upload as UploadModel | undefined) ?? connection.model<UploadRecord>('Upload', uploadSchema)
  );
}
