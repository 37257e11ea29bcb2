/** The revocation log (revocation-log.ts). */
import { modelOf } from '@cs/mongo';
import { type Connection, type Model, Schema } from 'mongoose';
import { strict } from '../schema-options';

/**
 * One revocation: a user's not-before, or one access token by digest. `_id` is its number in the
 * log, 1, 2, 3… with no gap, given by the unique index on `_id`.
 */
export interface RevocationRecord {
  _id: number;
  userId?: string;
  /** Seconds since the epoch. */
  notBefore?: number;
  digest?: string;
  /** Seconds since the epoch: when every token the entry refuses has expired. */
  until: number;
}

const revocationSchema = new Schema<RevocationRecord>(
  {
    _id: { type: Number, required: true },
    userId: { type: String },
    notBefore: { type: Number },
    digest: { type: String },
    until: { type: Number, required: true },
  },
  { ...strict, collection: 'revocations' },
);
// A user's newest not-before, when a session starts.
revocationSchema.index({ userId: 1, _id: -1 });
// One entry per revoked token: the unique key on `digest` (REVOCATION_DIGEST_KEY) is made by the
// log itself (revocation-log.ts), not here, since a log written before it may hold a digest twice,
// and a schema index that cannot be built would stop identity's boot.
/** The unique key on a revoked token's digest; sparse: entries of a not-before have none. */
export const REVOCATION_DIGEST_KEY = [{ digest: 1 }, { unique: true, sparse: true }] as const;

export type RevocationModel = Model<RevocationRecord>;

export function revocationModel(connection: Connection): RevocationModel {
  return modelOf(connection, 'Revocation', revocationSchema);
}
