/**
 * Sessions: a login, and every pair of tokens refreshed from it, until it ends. The access token
 * stays the contract's JWT; the refresh token (refresh-tokens.ts) gets the next pair.
 *
 * A refresh is the insert of the successor's record, then two reads at once: the session (is it
 * live?) and its end (has it ended?). The token names its session and user and is signed, so no
 * read is needed to know them. The reads come after the insert for the race with an end (below).
 *
 * Spending a token, exactly once on any server: its successor is derived from it, and the
 * successor's record is inserted under the unique `_id`. The insert that wins spent the token; a
 * racer that loses (another tab, a retried request, another replica) reads the successor's record
 * and, within the grace interval, answers the very same pair: the same refresh token and, signed
 * with the same `iat`, the same access token. Past the grace interval a spent token counts as
 * stolen: the session ends, and so does every token descended from its login. No conditional
 * update decides anything here, so FerretDB's non-atomic ones cannot let two takers win. A token
 * of a session that is not live gets 401, and the record its refresh inserted goes again.
 *
 * A session ends on logout, on "log out everywhere", on a new password (change or reset), on the
 * account's deletion, on reuse of a spent token, IDLE_MS after its last refresh and MAX_AGE_MS
 * after its login. Ending inserts the session's end record (model.ts: an update of `endedAt` can be
 * undone by a refresh's update of `lastUsedAt` on FerretDB; an insert cannot), and sets `endedAt`
 * for the list (session-ends.ts). Each access token takes a second of its own (issued-pairs.ts).
 *
 * A refresh racing an end: every access token a refresh answers is refused once the end has
 * answered (within the revocation bound), with no conditional update (FerretDB's are not atomic)
 * and each single insert or read atomic. A refresh is I (insert its record) then R (read the end
 * record); an end of one session is E (insert the end record) then S (read the session's records,
 * and revoke each one's access token), each step starting once the one before has finished:
 * - I finished before S started: S finds the record, and the token is revoked;
 * - otherwise I finished after S started, so after E finished, and R, after I, finds the end:
 *   the refresh answers 401 and deletes its record.
 * A refresh that lost its insert to a racer answers the winner's pair: the winner's insert was
 * before its own failed one, so one of the two cases holds for the winner's, with R after it.
 * Ending every session of a user is E for each of them, then S' (read the user's latest second
 * and write a not-before after it): a refresh whose R missed E had finished I before S' read, so
 * its second is below the not-before. A session that starts during S' is a login after the end.
 * A deleted account's sessions go (E as a delete: R then finds no session) before its not-before.
 */
import { randomBytes } from 'node:crypto';
import { type RevocationList, type SignedToken, signToken, type TokenSettings, tokenDigest } from '@cs/auth';
import { HttpError } from '@cs/errors';
import { trusted } from '@cs/mongo';
import type { RevocationLog, RevokedToken } from '../revocations/revocation-log';
import { issuedPairs } from './issued-pairs';
import { isLive, type SessionSettings } from './lifetime';
import type {
  RefreshTokenModel,
  RefreshTokenRecord,
  SessionEndModel,
  SessionEndRecord,
  SessionModel,
  SessionRecord,
} from './model';
import type { RefreshLimit } from './refresh-limit';
import type { RefreshTokenClaims, RefreshTokens } from './refresh-tokens';
import { sessionEnds } from './session-ends';
import { type CallerTokens, listSessions, type SessionSummary } from './session-list';

/** What register, login, a password change and a refresh answer. */
export interface SessionTokens {
  token: string;
  refreshToken: string;
  /** The access token's lifetime, in seconds. */
  expiresIn: number;
}

/**
 * What register, login and a password change answer: the pair, and whether the account's address
 * is verified. Not in the token: the contract's tokens carry the user id only, and whoever needs
 * to know reads the account (REQUIRE_VERIFIED_EMAIL does).
 */
export interface SignedIn extends SessionTokens {
  emailVerified: boolean;
}

export const sessionMessages = {
  invalidRefreshToken: 'Invalid or expired refresh token',
  notFound: 'Session not found',
} as const;

const USER_AGENT_MAX = 256;
/** How far behind a session's lastUsedAt may be (or a tenth of the idle lifetime, if shorter). */
const LAST_USED_PRECISION_MS = 60_000;

/** What the sessions of identity are made of. */
export interface SessionDeps {
  sessions: SessionModel;
  /** That a session ended, for good (model.ts). */
  ends: SessionEndModel;
  refreshTokens: RefreshTokenModel;
  revocations: RevocationLog;
  /**
   * This process's list of revoked tokens, as far as it has read the log: a token it refuses
   * already (a session ended before, by "log out everywhere") needs no entry of its own.
   */
  revoked: Pick<RevocationList, 'refuses'>;
  /** Refreshes per session (refresh-limit.ts). */
  limit: RefreshLimit;
  keys: RefreshTokens;
  tokens: TokenSettings;
  /** The access token's lifetime in seconds (JWT_EXPIRES_IN). */
  expiresInS: number;
  settings: SessionSettings;
  now?: () => number;
}

export function createSessions(deps: SessionDeps) {
  const {
    sessions,
    ends,
    refreshTokens,
    revocations,
    limit,
    keys,
    tokens,
    expiresInS,
    settings,
    now = Date.now,
  } = deps;
  const refused = () => new HttpError(401, sessionMessages.invalidRefreshToken);
  const { latestIssued, issue } = issuedPairs(refreshTokens);
  const { revokeUser, markEnded, endSession } = sessionEnds({ ...deps, latestIssued, now });
  /** Spends under way in this process, by the spent token's hash. */
  const spending = new Map<string, Promise<SessionTokens>>();

  /** The pair for a refresh token whose access token took second `iat`: the same bytes each time. */
  const pair = (userId: string, refreshToken: string, iat: number): SessionTokens => ({
    token: signToken(userId, tokens, iat),
    refreshToken,
    expiresIn: expiresInS,
  });

  /** Spends `refreshToken` (which says `claims`) for the next pair: see refresh. */
  const spend = async (claims: RefreshTokenClaims, refreshToken: string): Promise<SessionTokens> => {
    const at = now();
    const successor = keys.successorOf(refreshToken, claims);
    const record = { _id: keys.hashOf(successor), sessionId: claims.sessionId, userId: claims.userId };
    const fromS = Math.max(Math.floor(at / 1000), claims.tokensFrom);
    // The insert first, then the reads: see the race with an end, at the top.
    const issued = await issue({ ...record, createdAt: new Date(at) }, fromS);
    const [session, end] = await Promise.all([
      sessions.findById(claims.sessionId).lean<SessionRecord>(),
      ends.findById(claims.sessionId).lean<SessionEndRecord>(),
    ]);
    if (!isLive(session, at, settings, end)) {
      // Nothing is kept for a session that is gone (a deleted account's), or that cannot use it.
      if (!('spent' in issued)) await refreshTokens.deleteOne({ _id: record._id });
      throw refused();
    }
    if ('spent' in issued) {
      // By a racer a moment ago (the same pair again), or long ago (stolen).
      if (at - issued.spent.createdAt.getTime() > settings.graceMs) {
        await endSession(session._id);
        throw refused();
      }
      return pair(claims.userId, successor, issued.spent.iat);
    }
    // To the minute: a write saved on most refreshes, a minute at most off an idle lifetime of days.
    // (A racer's older time written last costs a few ms of idle.)
    if (at - session.lastUsedAt.getTime() >= Math.min(LAST_USED_PRECISION_MS, settings.idleMs / 10)) {
      await sessions.updateOne({ _id: session._id }, { $set: { lastUsedAt: new Date(at) } });
    }
    return pair(claims.userId, successor, issued.iat);
  };

  return {
    /** A new session for `userId` (a login, a register, a new password), and its first pair. */
    async start(userId: string, userAgent: string | undefined): Promise<SessionTokens> {
      const tokensFrom = await revocations.notBeforeOf(userId);
      const at = now();
      const sessionId = randomBytes(12).toString('hex');
      const refreshToken = keys.fresh({ sessionId, userId, tokensFrom });
      const [, issued] = await Promise.all([
        sessions.create({
          _id: sessionId,
          userId,
          userAgent: userAgent ? userAgent.slice(0, USER_AGENT_MAX) : null,
          createdAt: new Date(at),
          lastUsedAt: new Date(at),
          endedAt: null,
        }),
        issue(
          { _id: keys.hashOf(refreshToken), sessionId, userId, createdAt: new Date(at) },
          Math.max(Math.floor(at / 1000), tokensFrom),
        ),
      ]);
      if ('spent' in issued) throw new Error('a fresh refresh token found issued already');
      return pair(userId, refreshToken, issued.iat);
    },

    /** Spends `refreshToken` for the next pair (see above); 401 when it cannot. */
    async refresh(refreshToken: string): Promise<SessionTokens> {
      const claims = keys.open(refreshToken);
      if (!claims) throw refused();
      limit.take(claims.sessionId);
      // One spend at a time per token in this process: the same token sent again meanwhile (a
      // retry, two tabs) waits for that answer instead of racing it.
      const running = spending.get(refreshToken);
      if (running) return running;
      const spent = spend(claims, refreshToken).finally(() => spending.delete(refreshToken));
      spending.set(refreshToken, spent);
      return spent;
    },

    /**
     * Logout: the session of `refreshToken` ends, if it names one, and so does `accessToken` (the
     * request's Bearer token, one of ours), unless it was revoked already: the log holds one entry
     * per token (an expired one needs none).
     */
    async endByToken(refreshToken: string | undefined, accessToken?: SignedToken): Promise<void> {
      const claims = refreshToken === undefined ? null : keys.open(refreshToken);
      const bearer: RevokedToken[] =
        accessToken === undefined || accessToken.revoked
          ? []
          : [{ userId: accessToken.userId, digest: tokenDigest(accessToken.token), expiresAt: accessToken.expiresAt }];
      if (claims) await endSession(claims.sessionId, bearer);
      else await revocations.revokeTokens(bearer);
    },

    /** The caller's live sessions, newest first, its own marked `current` (session-list.ts). */
    list(userId: string, caller: CallerTokens = {}): Promise<SessionSummary[]> {
      return listSessions({ sessions, refreshTokens, keys, settings, at: now() }, userId, caller);
    },

    /**
     * When the live session that issued `userId`'s access token of second `issuedAt` began, by the
     * record of the pair it was issued with (the unique `(userId, iat)`); undefined for none.
     */
    async signedInAt(userId: string, issuedAt: number): Promise<Date | undefined> {
      const issued = await refreshTokens
        .findOne({ userId, iat: issuedAt }, { sessionId: 1 })
        .lean<RefreshTokenRecord>();
      if (!issued) return undefined;
      const session = await sessions.findOne({ _id: issued.sessionId, userId }).lean<SessionRecord>();
      return isLive(session, now(), settings) ? session.createdAt : undefined;
    },

    /** Ends one of `userId`'s sessions; 404 for another user's, an unknown or an ended one. */
    async end(userId: string, sessionId: string): Promise<void> {
      const session = await sessions.findOne({ _id: sessionId, userId }).lean<SessionRecord>();
      if (!isLive(session, now(), settings)) throw new HttpError(404, sessionMessages.notFound);
      await endSession(sessionId);
    },

    /**
     * Every session of `userId` ends, and every access token issued to the user until now stops
     * working: log out everywhere, a new password, a deleted account.
     */
    async endAll(userId: string): Promise<void> {
      const open = await sessions.find({ userId, endedAt: null }, { _id: 1 }).lean<Pick<SessionRecord, '_id'>[]>();
      await markEnded(
        open.map((s) => s._id),
        { userId, endedAt: null },
        now(),
      );
      await revokeUser(userId);
    },

    /**
     * Forgets sessions past their absolute lifetime, and their pairs: a record is younger than its
     * session, so one older than the lifetime (and than an access token's) is of a session that
     * can no longer refresh, and its access token has expired.
     */
    async prune(): Promise<void> {
      const at = now();
      await refreshTokens.deleteMany({
        createdAt: trusted({ $lt: new Date(at - Math.max(settings.maxAgeMs, expiresInS * 1000)) }),
      });
      await sessions.deleteMany({ createdAt: trusted({ $lt: new Date(at - settings.maxAgeMs) }) });
      // An end is no older than its session's start: past the lifetime, the session is refused anyway.
      await ends.deleteMany({ at: trusted({ $lt: new Date(at - settings.maxAgeMs) }) });
    },

    /** A deleted account's sessions and refresh tokens go: nothing of it is kept. Idempotent. */
    async forgetAll(userId: string): Promise<void> {
      // Its sessions go first: none of its tokens refreshes again, and a refresh racing this one
      // either finds no session or inserted its record before the not-before below reads the
      // user's latest second (the race at the top). Then its access tokens stop working (again: a
      // deletion finished by the outbox may not have ended its sessions).
      const ended = await sessions.find({ userId }, { _id: 1 }).lean<{ _id: string }[]>();
      await sessions.deleteMany({ userId });
      await revokeUser(userId);
      await refreshTokens.deleteMany({ userId });
      // Their end records too: with the sessions gone no refresh can find them, and nothing of
      // the account stays.
      if (ended.length > 0) await ends.deleteMany({ _id: trusted({ $in: ended.map((session) => session._id) }) });
    },
  };
}

export type Sessions = ReturnType<typeof createSessions>;
