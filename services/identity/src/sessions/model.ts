/** Sessions, their refresh tokens' records and their ends (sessions.ts), with their indexes. */
import { modelOf } from '@cs/mongo';
import { type Connection, type Model, Schema } from 'mongoose';
import { strict } from '../schema-options';

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
