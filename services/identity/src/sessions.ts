/**
 * Sessions: a login, and every pair of tokens refreshed from it, until it ends. The access token
 * stays the contract's JWT; the refresh token (refresh-tokens.ts) gets the next pair.
 *
 * Spending a token, exactly once on any server: its successor is derived from it, and the
 * successor's record is inserted under the unique `_id`. The insert that wins spent the token; a
 * racer that loses (another tab, a retried request, another replica) reads the successor's record
 * and, within the grace interval, answers the very same pair: the same refresh token and, signed
 * with the same `iat`, the same access token. Past the grace interval a spent token counts as
 * stolen: the session ends, and so does every token descended from its login. No conditional
 * update decides anything here, so FerretDB's non-atomic ones cannot let two takers win.
 *
 * A session ends on logout, on "log out everywhere", on a new password (change or reset), on the
 * account's deletion, on reuse of a spent token, IDLE_MS after its last refresh and MAX_AGE_MS
 * after its login. Ending is a plain write of `endedAt`: a refresh that read the session just
 * before may still answer one pair, whose refresh token then finds the session ended.
 *
 * Ending reaches the access tokens too, through the revocation log (revocation-log.ts): a session
 * ended alone revokes the access tokens it was issued that have not expired (each is the token
 * signed for its refresh token's record, so the records are their digests' keeping); every
 * session of a user ending revokes all the user's tokens issued until then. A session's tokens
 * are issued no earlier than the user's not-before when it started (`tokensFrom`), so a login
 * right after "log out everywhere", even within the same second, gets a token that works.
 */
import { randomBytes } from 'node:crypto';
import { signToken, type TokenSettings, tokenDigest, verifyClaims } from '@cs/auth';
import { HttpError } from '@cs/errors';
import { isDuplicateKey, trusted } from '@cs/mongo';
import type { RefreshTokenModel, RefreshTokenRecord, SessionModel, SessionRecord } from './model';
import type { RefreshTokens } from './refresh-tokens';
import type { RevocationLog } from './revocation-log';

/** What register, login, a password change and a refresh answer. */
export interface SessionTokens {
  token: string;
  refreshToken: string;
  /** The access token's lifetime, in seconds. */
  expiresIn: number;
}

export interface SessionSummary {
  id: string;
  createdAt: Date;
  lastUsedAt: Date;
  userAgent: string | null;
}

export interface SessionSettings {
  /** Sessions end this long after their last refresh. */
  idleMs: number;
  /** Sessions end this long after their login, however often refreshed. */
  maxAgeMs: number;
  /** How long a spent refresh token still answers its successor pair. */
  graceMs: number;
}

export const sessionMessages = {
  invalidRefreshToken: 'Invalid or expired refresh token',
  notFound: 'Session not found',
} as const;

const USER_AGENT_MAX = 256;

export function createSessions({
  sessions,
  refreshTokens,
  revocations,
  keys,
  tokens,
  expiresInS,
  settings,
  now = Date.now,
}: {
  sessions: SessionModel;
  refreshTokens: RefreshTokenModel;
  revocations: RevocationLog;
  keys: RefreshTokens;
  tokens: TokenSettings;
  /** The access token's lifetime in seconds (JWT_EXPIRES_IN). */
  expiresInS: number;
  settings: SessionSettings;
  now?: () => number;
}) {
  const refused = () => new HttpError(401, sessionMessages.invalidRefreshToken);

  /** The pair for a refresh token issued at `issuedAt`: the same bytes each time it is asked again. */
  const pair = (userId: string, refreshToken: string, issuedAt: Date): SessionTokens => ({
    token: signToken(userId, tokens, Math.floor(issuedAt.getTime() / 1000)),
    refreshToken,
    expiresIn: expiresInS,
  });

  const live = (session: SessionRecord | null, at: number): session is SessionRecord =>
    session !== null &&
    session.endedAt === null &&
    at - session.lastUsedAt.getTime() < settings.idleMs &&
    at - session.createdAt.getTime() < settings.maxAgeMs;

  /** The session ends, and so do the access tokens it was issued that are still valid. */
  const endSession = async (id: string) => {
    const at = now();
    await sessions.updateOne({ _id: id, endedAt: null }, { $set: { endedAt: new Date(at) } });
    const issued = await refreshTokens
      .find({ sessionId: id, issuedAt: trusted({ $gt: new Date(at - expiresInS * 1000) }) }, { userId: 1, issuedAt: 1 })
      .lean<Pick<RefreshTokenRecord, 'userId' | 'issuedAt'>[]>();
    await revocations.revokeTokens(
      issued.map(({ userId, issuedAt }) => {
        const { token } = pair(userId, '', issuedAt);
        return { digest: tokenDigest(token), expiresAt: Math.floor(issuedAt.getTime() / 1000) + expiresInS };
      }),
    );
  };

  return {
    /** A new session for `userId` (a login, a register, a new password), and its first pair. */
    async start(userId: string, userAgent: string | undefined): Promise<SessionTokens> {
      const tokensFrom = await revocations.notBeforeOf(userId);
      const at = new Date(now());
      const id = randomBytes(12).toString('hex');
      const refreshToken = keys.fresh();
      await sessions.create({
        _id: id,
        userId,
        userAgent: userAgent ? userAgent.slice(0, USER_AGENT_MAX) : null,
        createdAt: at,
        lastUsedAt: at,
        endedAt: null,
        tokensFrom,
      });
      const issuedAt = new Date(Math.max(at.getTime(), tokensFrom * 1000));
      await refreshTokens.create({ _id: keys.hashOf(refreshToken), sessionId: id, userId, issuedAt });
      return pair(userId, refreshToken, issuedAt);
    },

    /** Spends `refreshToken` for the next pair (see above); 401 when it cannot. */
    async refresh(refreshToken: string): Promise<SessionTokens> {
      const presented = await refreshTokens.findById(keys.hashOf(refreshToken)).lean<RefreshTokenRecord>();
      if (!presented) throw refused();
      const at = now();
      const session = await sessions.findById(presented.sessionId).lean<SessionRecord>();
      if (!live(session, at)) throw refused();
      const successor = keys.successorOf(refreshToken);
      const issued = { _id: keys.hashOf(successor), sessionId: session._id, userId: presented.userId };
      const issuedAt = new Date(Math.max(at, (session.tokensFrom ?? 0) * 1000));
      try {
        await refreshTokens.create({ ...issued, issuedAt });
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        // Spent already: by a racer a moment ago (the same pair again), or long ago (stolen).
        const spent = await refreshTokens.findById(issued._id).lean<RefreshTokenRecord>();
        if (!spent) throw err;
        if (at - spent.issuedAt.getTime() > settings.graceMs) {
          await endSession(session._id);
          throw refused();
        }
        return pair(presented.userId, successor, spent.issuedAt);
      }
      // Later refreshes only move it on: a racer's older time written last costs a few ms of idle.
      await sessions.updateOne({ _id: session._id }, { $set: { lastUsedAt: new Date(at) } });
      return pair(presented.userId, successor, issuedAt);
    },

    /**
     * Logout: the session of `refreshToken` ends, if it was one, and so does `accessToken` (the
     * request's Bearer token), when it is one of ours.
     */
    async endByToken(refreshToken: string, accessToken?: string): Promise<void> {
      const presented = await refreshTokens.findById(keys.hashOf(refreshToken)).lean<RefreshTokenRecord>();
      if (presented) await endSession(presented.sessionId);
      if (accessToken === undefined) return;
      let expiresAt: number;
      try {
        ({ expiresAt } = verifyClaims(accessToken, tokens.secret));
      } catch {
        return;
      }
      await revocations.revokeTokens([{ digest: tokenDigest(accessToken), expiresAt }]);
    },

    /** The caller's live sessions, newest first. */
    async list(userId: string): Promise<SessionSummary[]> {
      const at = now();
      const found = await sessions
        .find({ userId, endedAt: null, createdAt: trusted({ $gt: new Date(at - settings.maxAgeMs) }) })
        .sort({ createdAt: -1, _id: -1 })
        .lean<SessionRecord[]>();
      return found
        .filter((s) => live(s, at))
        .map((s) => ({ id: s._id, createdAt: s.createdAt, lastUsedAt: s.lastUsedAt, userAgent: s.userAgent }));
    },

    /** Ends one of `userId`'s sessions; 404 for another user's, an unknown or an ended one. */
    async end(userId: string, sessionId: string): Promise<void> {
      const session = await sessions.findOne({ _id: sessionId, userId }).lean<SessionRecord>();
      if (!live(session, now())) throw new HttpError(404, sessionMessages.notFound);
      await endSession(sessionId);
    },

    /**
     * Every session of `userId` ends, and every access token issued to the user until now stops
     * working: log out everywhere, a new password, a deleted account.
     */
    async endAll(userId: string): Promise<void> {
      await sessions.updateMany({ userId, endedAt: null }, { $set: { endedAt: new Date(now()) } });
      await revocations.revokeUser(userId);
    },

    /** A deleted account's sessions and refresh tokens go: nothing of it is kept. Idempotent. */
    async forgetAll(userId: string): Promise<void> {
      // Its access tokens stop working (again: a deletion finished by the outbox may not have
      // ended its sessions), and its refresh tokens go first: none of them refreshes again.
      await revocations.revokeUser(userId);
      await refreshTokens.deleteMany({ userId });
      await sessions.deleteMany({ userId });
    },
  };
}

export type Sessions = ReturnType<typeof createSessions>;
