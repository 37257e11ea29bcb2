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
 *
 * No two access tokens of a user are the same token: each takes a second of its own (IssuedToken
 * in model.ts), the next free one from now, so that revoking one token by its digest never
 * revokes another session's token issued in the same second.
 */
import { randomBytes } from 'node:crypto';
import { signToken, type TokenSettings, tokenDigest, verifyClaims } from '@cs/auth';
import { HttpError } from '@cs/errors';
import { isDuplicateKey, trusted } from '@cs/mongo';
import type { IssuedTokenModel, RefreshTokenModel, RefreshTokenRecord, SessionModel, SessionRecord } from './model';
import type { RefreshLimit } from './refresh-limit';
import type { RefreshTokens } from './refresh-tokens';
import type { RevocationLog, RevokedToken } from './revocation-log';

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
/** How far behind a session's lastUsedAt may be (or a tenth of the idle lifetime, if shorter). */
const LAST_USED_PRECISION_MS = 60_000;
/** Tries at a free second for a token; each try after the first starts after the user's latest. */
const ISSUE_ATTEMPTS = 100;

export function createSessions({
  sessions,
  refreshTokens,
  issuedTokens,
  revocations,
  limit,
  keys,
  tokens,
  expiresInS,
  settings,
  now = Date.now,
}: {
  sessions: SessionModel;
  refreshTokens: RefreshTokenModel;
  issuedTokens: IssuedTokenModel;
  revocations: RevocationLog;
  /** Refreshes per session (refresh-limit.ts). */
  limit: RefreshLimit;
  keys: RefreshTokens;
  tokens: TokenSettings;
  /** The access token's lifetime in seconds (JWT_EXPIRES_IN). */
  expiresInS: number;
  settings: SessionSettings;
  now?: () => number;
}) {
  const refused = () => new HttpError(401, sessionMessages.invalidRefreshToken);
  /** Spends under way in this process, by the spent token's record id. */
  const spending = new Map<string, Promise<SessionTokens>>();

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

  /** The latest second a token of `userId` was issued in (0: none within a token's lifetime). */
  const latestIssued = async (userId: string): Promise<number> => {
    const taken = await issuedTokens.find({ userId }, { _id: 1 }).lean<{ _id: string }[]>();
    return Math.max(0, ...taken.map(({ _id }) => Number(_id.slice(userId.length + 1))));
  };

  /**
   * When a new access token of `userId` is issued: `fromMs` (now, or the user's not-before if
   * later), or, when another token of the user has that second, the second after the user's latest.
   */
  const issueTime = async (userId: string, fromMs: number): Promise<Date> => {
    const first = Math.floor(fromMs / 1000);
    let iat = first;
    for (let attempt = 1; ; attempt++) {
      try {
        await issuedTokens.create({
          _id: `${userId}:${iat}`,
          userId,
          expiresAt: new Date((iat + expiresInS) * 1000),
        });
        return new Date(iat === first ? fromMs : iat * 1000);
      } catch (err) {
        if (!isDuplicateKey(err) || attempt >= ISSUE_ATTEMPTS) throw err;
        iat = Math.max(iat, await latestIssued(userId)) + 1;
      }
    }
  };

  /**
   * Every token of `userId` issued until now is refused: those of this second, and those whose
   * second was taken ahead of it (issueTime).
   */
  const revokeUser = async (userId: string) => {
    await revocations.revokeUser(userId, (await latestIssued(userId)) + 1);
  };

  /**
   * The session ends, and so do the access tokens it was issued that are still valid, and `also`
   * (a logout's Bearer token), once each.
   */
  const endSession = async (id: string, also: RevokedToken[] = []) => {
    const at = now();
    await sessions.updateOne({ _id: id, endedAt: null }, { $set: { endedAt: new Date(at) } });
    const issued = await refreshTokens
      .find({ sessionId: id, issuedAt: trusted({ $gt: new Date(at - expiresInS * 1000) }) }, { userId: 1, issuedAt: 1 })
      .lean<Pick<RefreshTokenRecord, 'userId' | 'issuedAt'>[]>();
    const ended = new Map(also.map((t) => [t.digest, t]));
    for (const { userId, issuedAt } of issued) {
      const digest = tokenDigest(pair(userId, '', issuedAt).token);
      ended.set(digest, { userId, digest, expiresAt: Math.floor(issuedAt.getTime() / 1000) + expiresInS });
    }
    await revocations.revokeTokens([...ended.values()]);
  };

  /** Spends `refreshToken` (whose record is `presented`) for the next pair: see refresh. */
  const spend = async (presented: RefreshTokenRecord, refreshToken: string): Promise<SessionTokens> => {
    const at = now();
    const successor = keys.successorOf(refreshToken);
    const successorId = keys.hashOf(successor);
    // Three things at once: the session, whether the successor exists already (a replay), and a
    // second for the next access token (taken for nothing when the answer is a replay or a 401).
    const [session, spentAlready, taken] = await Promise.all([
      sessions.findById(presented.sessionId).lean<SessionRecord>(),
      refreshTokens.exists({ _id: successorId }),
      issueTime(presented.userId, at),
    ]);
    if (!live(session, at)) throw refused();
    const issued = { _id: successorId, sessionId: session._id, userId: presented.userId };
    // Spent already: by a racer a moment ago (the same pair again), or long ago (stolen).
    const whenSpent = async (): Promise<SessionTokens> => {
      const spent = await refreshTokens.findById(issued._id).lean<RefreshTokenRecord>();
      if (!spent) throw new Error('a refresh token spent, and its successor not found');
      if (at - (spent.createdAt ?? spent.issuedAt).getTime() > settings.graceMs) {
        await endSession(session._id);
        throw refused();
      }
      return pair(presented.userId, successor, spent.issuedAt);
    };
    if (spentAlready) return whenSpent();
    // A session started right after a revocation issues no earlier than its not-before.
    const tokensFrom = (session.tokensFrom ?? 0) * 1000;
    const issuedAt = taken.getTime() >= tokensFrom ? taken : await issueTime(presented.userId, tokensFrom);
    try {
      await refreshTokens.create({ ...issued, issuedAt, createdAt: new Date(at) });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      return whenSpent();
    }
    // To the minute: a write saved on most refreshes, a minute at most off an idle lifetime of days.
    // (A racer's older time written last costs a few ms of idle.)
    if (at - session.lastUsedAt.getTime() >= Math.min(LAST_USED_PRECISION_MS, settings.idleMs / 10)) {
      await sessions.updateOne({ _id: session._id }, { $set: { lastUsedAt: new Date(at) } });
    }
    return pair(presented.userId, successor, issuedAt);
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
      const issuedAt = await issueTime(userId, Math.max(at.getTime(), tokensFrom * 1000));
      await refreshTokens.create({ _id: keys.hashOf(refreshToken), sessionId: id, userId, issuedAt, createdAt: at });
      return pair(userId, refreshToken, issuedAt);
    },

    /** Spends `refreshToken` for the next pair (see above); 401 when it cannot. */
    async refresh(refreshToken: string): Promise<SessionTokens> {
      const presented = await refreshTokens.findById(keys.hashOf(refreshToken)).lean<RefreshTokenRecord>();
      if (!presented) throw refused();
      limit.take(presented.sessionId);
      // One spend at a time per token in this process: the same token sent again meanwhile (a
      // retry, two tabs) waits for that answer instead of racing it.
      const running = spending.get(presented._id);
      if (running) return running;
      const spent = spend(presented, refreshToken).finally(() => spending.delete(presented._id));
      spending.set(presented._id, spent);
      return spent;
    },

    /**
     * Logout: the session of `refreshToken` ends, if it was one, and so does `accessToken` (the
     * request's Bearer token), when it is one of ours.
     */
    async endByToken(refreshToken: string | undefined, accessToken?: string): Promise<void> {
      const presented =
        refreshToken === undefined
          ? null
          : await refreshTokens.findById(keys.hashOf(refreshToken)).lean<RefreshTokenRecord>();
      const bearer: RevokedToken[] = [];
      if (accessToken !== undefined) {
        try {
          const { userId, expiresAt } = verifyClaims(accessToken, tokens.secret);
          bearer.push({ userId, digest: tokenDigest(accessToken), expiresAt });
        } catch {
          // Not one of ours, or expired: nothing to revoke.
        }
      }
      if (presented) await endSession(presented.sessionId, bearer);
      else await revocations.revokeTokens(bearer);
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
      await revokeUser(userId);
    },

    /** Forgets the records of access tokens that have expired. */
    async prune(): Promise<void> {
      await issuedTokens.deleteMany({ expiresAt: trusted({ $lt: new Date(now()) }) });
    },

    /** A deleted account's sessions and refresh tokens go: nothing of it is kept. Idempotent. */
    async forgetAll(userId: string): Promise<void> {
      // Its access tokens stop working (again: a deletion finished by the outbox may not have
      // ended its sessions), and its refresh tokens go first: none of them refreshes again.
      await revokeUser(userId);
      await refreshTokens.deleteMany({ userId });
      await issuedTokens.deleteMany({ userId });
      await sessions.deleteMany({ userId });
    },
  };
}

export type Sessions = ReturnType<typeof createSessions>;
