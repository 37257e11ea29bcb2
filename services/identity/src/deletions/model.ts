/** The outbox of account deletions (account-deletions.ts). */
import { modelOf } from '@cs/mongo';
import { type OutboxEntry, withOutboxFields } from '@cs/outbox';
import { type Connection, type Model, Schema } from 'mongoose';
import { strict } from '../schema-options';

/** The services that own an account's data, each told of its deletion. */
export const OWNERS = ['posts', 'notes', 'files'] as const;
export type Owner = (typeof OWNERS)[number];

/** A deleted account's entry in the deletions outbox (`@cs/outbox`), until every owner confirms. */
export interface DeletionRecord extends OutboxEntry {
  /** The deleted user's id. */
  _id: string;
  /** Owners that have not confirmed yet. */
  pending: Owner[];
}

const deletionSchema = withOutboxFields(
  new Schema<DeletionRecord>(
    {
      _id: { type: String, required: true },
      pending: { type: [String], required: true },
    },
    { ...strict, collection: 'account_deletions' },
  ),
);

export type DeletionModel = Model<DeletionRecord>;

export function accountDeletionModel(connection: Connection): DeletionModel {
  return modelOf(connection, 'AccountDeletion', deletionSchema);
}
