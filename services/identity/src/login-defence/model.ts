/** The login throttle's counts (login-throttle.ts), keyed by a hash of what is counted. */
import { modelOf } from '@cs/mongo';
import { type Connection, type Model, Schema } from 'mongoose';
import { strict } from '../schema-options';

export interface FailureRecord {
  /** A hash of what is counted: the account, or the account and an address. */
  _id: string;
  failures: number;
  lastFailureAt: Date;
}

export interface KnownRecord {
  /** A hash of the account and the address. */
  _id: string;
  at: Date;
}

const failureSchema = new Schema<FailureRecord>(
  { _id: { type: String, required: true }, failures: { type: Number, required: true }, lastFailureAt: Date },
  { ...strict, collection: 'login_failures' },
);
const knownSchema = new Schema<KnownRecord>(
  { _id: { type: String, required: true }, at: { type: Date, required: true } },
  { ...strict, collection: 'login_known' },
);

export function loginFailureModel(connection: Connection): Model<FailureRecord> {
  return modelOf(connection, 'LoginFailure', failureSchema);
}

export function loginKnownModel(connection: Connection): Model<KnownRecord> {
  return modelOf(connection, 'LoginKnown', knownSchema);
}
