import { modelOf } from '@cs/mongo';
import { type Connection, type Model, Schema } from 'mongoose';

/**
 * A size-less link holding one of its owner's slots (see link-slots.ts). `_id` is
 * `<ownerId>#<slot>.<lap>`: the lap-th link to hold that slot. `_id`'s unique index lets one
 * taker insert each lap.
 */
export interface LinkSlot {
  _id: string;
  ownerId: string;
  slot: number;
  lap: number;
  /** The key of the link that holds the slot. */
  key: string;
  /** When that link expires; from then on the slot's next lap may be taken. */
  expiresAt: Date;
}

const linkSlotSchema = new Schema<LinkSlot>(
  {
    _id: { type: String, required: true },
    ownerId: { type: String, required: true },
    slot: { type: Number, required: true },
    lap: { type: Number, required: true },
    key: { type: String, required: true },
    expiresAt: { type: Date, required: true },
  },
  { versionKey: false, strict: 'throw', collection: 'link_slots' },
);
linkSlotSchema.index({ ownerId: 1 });

export type LinkSlotModel = Model<LinkSlot>;

export function linkSlotModel(connection: Connection): LinkSlotModel {
  return modelOf(connection, 'LinkSlot', linkSlotSchema);
}

/** The same slots for open multipart uploads, in a collection of their own: `key` is the upload's. */
export function multipartSlotModel(connection: Connection): LinkSlotModel {
  return modelOf(connection, 'MultipartSlot', linkSlotSchema.clone().set('collection', 'multipart_slots'));
}
