/**
 * The records of the pairs a session was issued, one per refresh token, by its keyed hash.
 *
 * No two access tokens of a user are the same token: each takes a second of its own, the unique
 * `(userId, iat)` of its record, the next free one from now, so that revoking one token by its
 * digest never revokes another session's token issued in the same second.
 */
import { isDuplicateKey, trusted } from '@cs/mongo';
import type { RefreshTokenModel, RefreshTokenRecord } from './model';

/** Tries at a free second for a token; each try after the first starts after the user's latest. */
const ISSUE_ATTEMPTS = 100;

/** A pair's record inserted (the second it took), or the record found under its `_id`: spent already. */
export type Issued = { iat: number } | { spent: RefreshTokenRecord };

export function issuedPairs(refreshTokens: RefreshTokenModel) {
  /** The latest second from `fromS` on that an access token of `userId` took (fromS - 1: none). */
  const latestIssued = async (userId: string, fromS: number): Promise<number> => {
    const taken = await refreshTokens
      .find({ userId, iat: trusted({ $gte: fromS }) }, { iat: 1 })
      .lean<Pick<RefreshTokenRecord, 'iat'>[]>();
    return Math.max(fromS - 1, ...taken.map(({ iat }) => iat));
  };

  /**
   * Inserts the record of the pair whose refresh token hashes to `_id`, its access token at the
   * first free second of the user from `fromS` on; or finds that record inserted already.
   */
  const issue = async (
    record: Pick<RefreshTokenRecord, '_id' | 'sessionId' | 'userId' | 'createdAt'>,
    fromS: number,
  ): Promise<Issued> => {
    let iat = fromS;
    for (let attempt = 1; ; attempt++) {
      try {
        await refreshTokens.create({ ...record, iat });
        return { iat };
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        // Which unique key: the token's (spent already), or the user's second (taken: the next).
        const spent = await refreshTokens.findById(record._id).lean<RefreshTokenRecord>();
        if (spent) return { spent };
        if (attempt >= ISSUE_ATTEMPTS) throw err;
        iat = (await latestIssued(record.userId, iat)) + 1;
      }
    }
  };

  return { latestIssued, issue };
}
