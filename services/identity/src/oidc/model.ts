/** Sign-in with OpenID Connect: open flows, their uses, and linked identities (login codes are one-time tokens). */
import { modelOf } from '@cs/mongo';
import { type Connection, type Model, Schema, Types } from 'mongoose';
import { strict } from '../schema-options';

/** A sign-in under way, from `start` to its callback; `_id` is its `state`. */
export interface FlowRecord {
  _id: string;
  provider: string;
  /** Our PKCE verifier, for the provider: it never leaves this service. */
  verifier: string;
  nonce: string;
  /** The client's challenge: the login code is bound to it. */
  challenge: string;
  redirect: string;
  /** The address that started it, for the bound on open flows. */
  client: string;
  expiresAt: Date;
}

/** A flow's state, once used: the unique `_id` lets exactly one callback go on. */
export interface UseRecord {
  _id: string;
  at: Date;
}

/** An identity at a provider (its issuer and `sub`), linked to an account. */
export interface IdentityRecord {
  _id: Types.ObjectId;
  userId: Types.ObjectId;
  /** The provider's name in OIDC_PROVIDERS when it was linked. */
  provider: string;
  issuer: string;
  subject: string;
  /** The address the provider gave then, if any. */
  email: string | null;
  createdAt: Date;
}

const flowSchema = new Schema<FlowRecord>(
  {
    _id: { type: String, required: true },
    provider: { type: String, required: true },
    verifier: { type: String, required: true },
    nonce: { type: String, required: true },
    challenge: { type: String, required: true },
    redirect: { type: String, required: true },
    client: { type: String, required: true },
    expiresAt: { type: Date, required: true },
  },
  { ...strict, collection: 'oidc_flows' },
);
// The bound on open flows counts a client address's.
flowSchema.index({ client: 1, expiresAt: 1 });

const flowUseSchema = new Schema<UseRecord>(
  { _id: { type: String, required: true }, at: { type: Date, required: true } },
  { ...strict, collection: 'oidc_flow_uses' },
);

const identitySchema = new Schema<IdentityRecord>(
  {
    userId: { type: Schema.Types.ObjectId, required: true },
    provider: { type: String, required: true },
    issuer: { type: String, required: true },
    subject: { type: String, required: true },
    email: { type: String, default: null },
    createdAt: { type: Date, required: true },
  },
  { ...strict, collection: 'identities' },
);
// An identity is the pair (issuer, sub): the unique index decides which account a race links it to.
identitySchema.index({ issuer: 1, subject: 1 }, { unique: true });
identitySchema.index({ userId: 1 });

export function flowModel(connection: Connection): Model<FlowRecord> {
  return modelOf(connection, 'OidcFlow', flowSchema);
}

export function flowUseModel(connection: Connection): Model<UseRecord> {
  return modelOf(connection, 'OidcFlowUse', flowUseSchema);
}

export type IdentityModel = Model<IdentityRecord>;

export function identityModel(connection: Connection): IdentityModel {
  return modelOf(connection, 'Identity', identitySchema);
}

export const toObjectId = (id: string) => new Types.ObjectId(id);
