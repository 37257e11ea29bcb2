/**
 * Every collection identity keeps, with its indexes: the accounts, their sessions and refresh
 * tokens (sessions.ts), the login throttle's counts (login-throttle.ts) and password reset's
 * tokens, used tokens and request counts (password-reset.ts), the revocation log
 * (revocation-log.ts) and the outbox of account deletions (account-deletions.ts). Records keyed
 * by a hash or a user id use `_id`, which every server, FerretDB included, answers from its index.
 */
import { modelOf } from '@cs/mongo';
import { type OutboxEntry, withOutboxFields } from '@cs/outbox';
import { type Connection, type Model, Schema, type Types } from 'mongoose';
import type { Owner } from './account-deletions';

/** Options every collection here shares: unknown fields throw, no `__v`. */
const strict = { strict: 'throw', versionKey: false } as const;

// Accounts.

export interface UserRecord {
  _id: Types.ObjectId;
  email: string;
  /** The bcrypt hash; never selected unless asked for. */
  password: string;
  /** The name others see (profiles.ts); none until the owner gives one. */
  displayName?: string | null;
  /**
   * Every write of the password is the next version, taken as a turn (`@cs/mongo` turns), so a
   * write conditional on the hash it checked holds on FerretDB too. Accounts from before: none (0).
   */
  version?: number;
  createdAt: Date;
  updatedAt: Date;
}

const userSchema = new Schema<UserRecord>(
  {
    email: { type: String, required: true, trim: true, lowercase: true, maxlength: 254 },
    password: { type: String, required: true, select: false },
    displayName: { type: String, default: null },
    version: { type: Number, default: 0 },
  },
  { ...strict, timestamps: true },
);

// One account per address, enforced by the database: concurrent registrations cannot both win.
userSchema.index({ email: 1 }, { unique: true });

export type UserModel = Model<UserRecord>;

export function userModel(connection: Connection): UserModel {
  return modelOf(connection, 'User', userSchema);
}

// The login throttle's counts.

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

// Password reset.

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

// Sessions (sessions.ts).

/** A login and every token refreshed from it, until it ends. */
export interface SessionRecord {
  /** 24 hex characters, random. */
  _id: string;
  userId: string;
  /** The login's User-Agent, cut to 256 characters; null when it sent none. */
  userAgent: string | null;
  createdAt: Date;
  /** The last refresh (or the login): the idle lifetime runs from here. */
  lastUsedAt: Date;
  /** When it was ended (logout, log out everywhere, a new password, reuse of a spent token). */
  endedAt: Date | null;
}

/**
 * A pair that was issued: its refresh token by keyed hash (the token itself is never stored), and
 * the second of its access token. Its insert under the unique `_id` is what spends the token it
 * replaces; the unique `(userId, iat)` gives each second to one access token of a user (sessions.ts).
 */
export interface RefreshTokenRecord {
  /** The refresh token's keyed hash (refresh-tokens.ts). */
  _id: string;
  sessionId: string;
  userId: string;
  /**
   * The access token's `iat`, in seconds: it signs to the same token again. A token is its claims
   * signed, and its claims are the user id and the second (and the expiry that follows), so two
   * tokens of one user issued in one second would be the same token, and revoking one (by
   * digest) would revoke the other.
   */
  iat: number;
  /** When the pair was issued: the grace interval runs from here (`iat` may be a second or two ahead). */
  createdAt: Date;
}

const sessionSchema = new Schema<SessionRecord>(
  {
    _id: { type: String, required: true },
    userId: { type: String, required: true },
    userAgent: { type: String, default: null },
    createdAt: { type: Date, required: true },
    lastUsedAt: { type: Date, required: true },
    endedAt: { type: Date, default: null },
  },
  { ...strict, collection: 'sessions' },
);
// The caller's sessions, newest first; all of a user's, to end them.
sessionSchema.index({ userId: 1, createdAt: -1 });

const refreshTokenSchema = new Schema<RefreshTokenRecord>(
  {
    _id: { type: String, required: true },
    sessionId: { type: String, required: true },
    userId: { type: String, required: true },
    iat: { type: Number, required: true },
    createdAt: { type: Date, required: true },
  },
  // Not `refresh_tokens`: those records had another shape, and their tokens another format.
  { ...strict, collection: 'session_tokens' },
);
// A session's tokens: to revoke the access tokens it was issued when it ends.
refreshTokenSchema.index({ sessionId: 1 });
// One access token per user and second; a user's latest seconds.
refreshTokenSchema.index({ userId: 1, iat: 1 }, { unique: true });
// Records of sessions past their absolute lifetime go (prune).
refreshTokenSchema.index({ createdAt: 1 });

/**
 * That a session ended: inserted once, never updated, so nothing can undo it. The session's own
 * `endedAt` is written by an update, which FerretDB performs as a read and then a write of the
 * whole document: a refresh writing `lastUsedAt` at the same moment writes back the `endedAt: null`
 * it read (measured: 146 of 200 such pairs of updates lost one). `endedAt` stays for the list of
 * sessions; a refresh believes this record (sessions.ts).
 */
export interface SessionEndRecord {
  /** The session's id. */
  _id: string;
  at: Date;
}

const sessionEndSchema = new Schema<SessionEndRecord>(
  { _id: { type: String, required: true }, at: { type: Date, required: true } },
  { ...strict, collection: 'session_ends' },
);
// Ends older than a session's absolute lifetime go (prune).
sessionEndSchema.index({ at: 1 });

export type SessionModel = Model<SessionRecord>;
export type SessionEndModel = Model<SessionEndRecord>;
export type RefreshTokenModel = Model<RefreshTokenRecord>;

export function sessionModel(connection: Connection): SessionModel {
  return modelOf(connection, 'Session', sessionSchema);
}

export function sessionEndModel(connection: Connection): SessionEndModel {
  return modelOf(connection, 'SessionEnd', sessionEndSchema);
}

export function refreshTokenModel(connection: Connection): RefreshTokenModel {
  return modelOf(connection, 'RefreshToken', refreshTokenSchema);
}

// The revocation log (revocation-log.ts).

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

// Account deletions (account-deletions.ts).

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
