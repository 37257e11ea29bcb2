import { modelOf } from '@cs/mongo';
import { type OutboxEntry, withOutboxFields } from '@cs/outbox';
import { type Connection, type Model, Schema } from 'mongoose';

/**
 * The notes service is still to hear that the check removed an attached key's object: an entry
 * of the removals outbox (removals.ts). `_id` is the key: one entry per removal.
 */
export interface AttachmentRemoval extends OutboxEntry {
  _id: string;
  ownerId: string;
  /** Why the object was removed, as the note will show it. */
  reason: string;
}

const attachmentRemovalSchema = withOutboxFields(
  new Schema<AttachmentRemoval>(
    {
      _id: { type: String, required: true },
      ownerId: { type: String, required: true },
      reason: { type: String, required: true },
    },
    { versionKey: false, strict: 'throw', collection: 'attachment_removals' },
  ),
);

export type AttachmentRemovalModel = Model<AttachmentRemoval>;

export function attachmentRemovalModel(connection: Connection): AttachmentRemovalModel {
  return modelOf(connection, 'AttachmentRemoval', attachmentRemovalSchema);
}
