/** One-time tokens' live records and used tokens (one-time-tokens.ts). */
import { modelOf } from '@cs/mongo';
import { type Connection, type Model, Schema } from 'mongoose';
import { strict } from '../schema-options';

export interface OneTimeTokenRecord {
  /** `<purpose>:<subject>`: one live token per subject and purpose. */
  _id: string;
  tokenHash: string;
  /** What the token stands for (an address to verify, a user to sign in), as its purpose defines it. */
  payload: Record<string, unknown>;
  issuedAt: Date;
  expiresAt: Date;
}

export interface OneTimeTokenUseRecord {
  /** `<purpose>:<hash>` of a token that was used. */
  _id: string;
  at: Date;
}

const tokenSchema = new Schema<OneTimeTokenRecord>(
  {
    _id: { type: String, required: true },
    tokenHash: { type: String, required: true },
    payload: { type: Schema.Types.Mixed, required: true },
    issuedAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
  },
  { ...strict, collection: 'one_time_tokens', minimize: false },
);
const useSchema = new Schema<OneTimeTokenUseRecord>(
  { _id: { type: String, required: true }, at: { type: Date, required: true } },
  { ...strict, collection: 'one_time_token_uses' },
);

export function oneTimeTokenModel(connection: Connection): Model<OneTimeTokenRecord> {
  return modelOf(connection, 'OneTimeToken', tokenSchema);
}

export function oneTimeTokenUseModel(connection: Connection): Model<OneTimeTokenUseRecord> {
  return modelOf(connection, 'OneTimeTokenUse', useSchema);
}
