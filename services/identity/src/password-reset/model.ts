/** Password reset's tokens, used tokens and request counts (password-reset.ts). */
import { modelOf } from '@cs/mongo';
import { type Connection, type Model, Schema } from 'mongoose';
import { strict } from '../schema-options';

export interface ResetRecord {
  /** The user's id: one live token per user. */
  _id: string;
  tokenHash: string;
  expiresAt: Date;
  /** The account's password version when the token was sent; none for tokens sent before (0). */
  userVersion?: number;
}

export interface ResetUseRecord {
  /** The hash of a token that has been used. */
  _id: string;
  at: Date;
}

export interface ResetRequestCount {
  /** A hash of the address, so no address is stored. */
  _id: string;
  count: number;
  windowStartedAt: Date;
}

const resetSchema = new Schema<ResetRecord>(
  {
    _id: { type: String, required: true },
    tokenHash: { type: String, required: true },
    expiresAt: Date,
    userVersion: Number,
  },
  { ...strict, collection: 'password_resets' },
);
const resetUseSchema = new Schema<ResetUseRecord>(
  { _id: { type: String, required: true }, at: { type: Date, required: true } },
  { ...strict, collection: 'password_reset_uses' },
);
const resetRequestSchema = new Schema<ResetRequestCount>(
  { _id: { type: String, required: true }, count: Number, windowStartedAt: Date },
  { ...strict, collection: 'password_reset_requests' },
);

export function passwordResetModel(connection: Connection): Model<ResetRecord> {
  return modelOf(connection, 'PasswordReset', resetSchema);
}

export function passwordResetUseModel(connection: Connection): Model<ResetUseRecord> {
  return modelOf(connection, 'PasswordResetUse', resetUseSchema);
}

export function passwordResetRequestModel(connection: Connection): Model<ResetRequestCount> {
  return modelOf(connection, 'PasswordResetRequest', resetRequestSchema);
}
