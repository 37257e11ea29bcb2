/**
 * Ending sessions. Ending inserts the session's end record (model.ts: an update of `endedAt` can
 * be undone by a refresh's update of `lastUsedAt` on FerretDB; an insert cannot), and sets
 * `endedAt` for the list.
 *
 * Ending reaches the access tokens too, through the revocation log (revocation-log.ts): a session
 * ended alone revokes the access tokens it was issued that have not expired (each is the token
 * signed for its refresh token's record, so the records are their digests' keeping); every
 * session of a user ending revokes all the user's tokens issued until then. A session's tokens
 * are issued no earlier than the user's not-before when it started (its tokens carry it), so a
 * login right after "log out everywhere", even within the same second, gets a token that works.
 * How this holds against a refresh racing the end: see the race in sessions.ts.
 */
import { type RevocationList, signToken, type TokenSettings, tokenDigest } from '@cs/auth';
import { onlyDuplicateKeys, trusted } from '@cs/mongo';
import type { RevocationLog, RevokedToken } from '../revocations/revocation-log';
import type { RefreshTokenModel, RefreshTokenRecord, SessionEndModel, SessionModel } from './model';

export function sessionEnds({
  sessions,
  ends,
  refreshTokens,
  revocations,
  revoked,
  tokens,
  expiresInS,
  latestIssued,
  now,
}: {
  sessions: SessionModel;
  ends: SessionEndModel;
  refreshTokens: RefreshTokenModel;
  revocations: RevocationLog;
  /** This process's list of revoked tokens: a token it refuses already needs no entry of its own. */
  revoked: Pick<RevocationList, 'refuses'>;
  tokens: TokenSettings;
  /** The access token's lifetime in seconds (JWT_EXPIRES_IN). */
  expiresInS: number;
  /** The latest second from `fromS` on that an access token of `userId` took (issued-pairs.ts). */
  latestIssued: (userId: string, fromS: number) => Promise<number>;
  now: () => number;
}) {
  /**
   * Every token of `userId` issued until now is refused: those of this second, and those whose
   * second was taken ahead of it (issue).
   */
  const revokeUser = async (userId: string) => {
    const nowS = Math.floor(now() / 1000);
    await revocations.revokeUser(userId, (await latestIssued(userId, nowS)) + 1);
  };

  /**
   * Sessions `ids` have ended, for good, once this answers: their end records are in (one found
   * there already is the same end). `endedAt` is set too, on the sessions `open` finds (by
   * equality: FerretDB reads the whole collection for an `$in`), for the list.
   */
  const markEnded = async (ids: string[], open: Record<string, string | null>, at: number) => {
    if (ids.length === 0) return;
    const endedAt = new Date(at);
    const recorded = ends.insertMany(
      ids.map((_id) => ({ _id, at: endedAt })),
      { ordered: false },
    );
    await Promise.all([
      recorded.catch((err) => {
        if (!onlyDuplicateKeys(err)) throw err;
      }),
      sessions.updateMany(open, { $set: { endedAt } }),
    ]);
  };

  /**
   * The session ends, and so do the access tokens it was issued that are still valid, and `also`
   * (a logout's Bearer token), once each. The end record goes in before the records are read: see
   * the race in sessions.ts.
   */
  const endSession = async (id: string, also: RevokedToken[] = []) => {
    const at = now();
    await markEnded([id], { _id: id, endedAt: null }, at);
    const issued = await refreshTokens
      .find({ sessionId: id, iat: trusted({ $gt: Math.floor(at / 1000) - expiresInS }) }, { userId: 1, iat: 1 })
      .lean<Pick<RefreshTokenRecord, 'userId' | 'iat'>[]>();
    const ended = new Map(also.map((t) => [t.digest, t]));
    for (const { userId, iat } of issued) {
      // The very token its pair answered: the same claims signed again (sessions.ts `pair`).
      const token = signToken(userId, tokens, iat);
      if (revoked.refuses(token, userId, iat)) continue;
      const digest = tokenDigest(token);
      ended.set(digest, { userId, digest, expiresAt: iat + expiresInS });
    }
    await revocations.revokeTokens([...ended.values()]);
  };

  return { revokeUser, markEnded, endSession };
}
