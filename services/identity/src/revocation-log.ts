/**
 * The revocation log: every access token revoked before it expires, as entries numbered 1, 2, 3…
 * with no gap, which the gateway and every service follow (`GET /internal/revocations`, and
 * @cs/auth's revocation feed) to refuse those tokens without a database read of their own.
 *
 * Why the numbers hold on FerretDB, whose conditional writes are not atomic: an entry is an
 * insert whose `_id` is its number, and `_id`'s unique index lets one inserter have each number.
 * A writer tries the number after the newest it reads, and the next on a duplicate key, so a
 * number is only tried once the one before it exists: a reader that has read up to n and finds
 * nothing after it has seen every entry written before it looked. Revocations are rare (a logout,
 * a new password), so a write reads the newest number rather than keep a hint as the posts
 * listing log does for its busier one.
 *
 * An entry is kept until every token it refuses has expired; the newest is always kept, so the
 * numbers never start again from 1 while the database lives.
 */
import { notBeforeAt, type RevocationBatch } from '@cs/auth';
import { isDuplicateKey, trusted } from '@cs/mongo';
import type { RevocationModel, RevocationRecord } from './model';

/** The most entries one read of the log answers; a reader far behind reads again. */
export const READ_MAX = 1_000;
const PRUNE_EVERY_MS = 60_000;

export function createRevocationLog(
  entries: RevocationModel,
  {
    tokenLifetimeS,
    now = Date.now,
  }: {
    /** The access token's lifetime (JWT_EXPIRES_IN), in seconds. */
    tokenLifetimeS: number;
    now?: () => number;
  },
) {
  let prunedAt = 0;

  const newest = async (): Promise<number> => {
    const found = await entries.findOne({}, { _id: 1 }).sort({ _id: -1 }).lean<Pick<RevocationRecord, '_id'>>();
    return found?._id ?? 0;
  };

  const append = async (entry: Omit<RevocationRecord, '_id'>): Promise<void> => {
    let seq = (await newest()) + 1;
    for (;;) {
      try {
        await entries.create({ _id: seq, ...entry });
        break;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        seq += 1;
      }
    }
    if (now() - prunedAt > PRUNE_EVERY_MS) {
      prunedAt = now();
      await entries.deleteMany({ until: trusted({ $lt: Math.floor(now() / 1000) }), _id: trusted({ $lt: seq }) });
    }
  };

  return {
    /**
     * Every token of `userId` issued until now is refused, and every one with `iat` before
     * `atLeast` (tokens issued a second or two ahead); returns the user's not-before, from which
     * identity issues its next tokens.
     */
    async revokeUser(userId: string, atLeast = 0): Promise<number> {
      const notBefore = Math.max(notBeforeAt(now()), atLeast);
      await append({ userId, notBefore, until: notBefore + tokenLifetimeS });
      return notBefore;
    },

    /** These tokens (by digest, with their expiry in seconds) are refused. */
    async revokeTokens(tokens: { digest: string; expiresAt: number }[]): Promise<void> {
      const nowS = now() / 1000;
      for (const { digest, expiresAt } of tokens) {
        if (expiresAt > nowS) await append({ digest, until: expiresAt });
      }
    },

    /** The user's newest not-before (0: never revoked, or long enough ago to be forgotten). */
    async notBeforeOf(userId: string): Promise<number> {
      const found = await entries
        .findOne({ userId }, { notBefore: 1 })
        .sort({ _id: -1 })
        .lean<Pick<RevocationRecord, 'notBefore'>>();
      return found?.notBefore ?? 0;
    },

    /** The entries after `seq`, at most READ_MAX, in order, and the log's newest number. */
    async after(seq: number): Promise<RevocationBatch> {
      const [found, last] = await Promise.all([
        entries
          .find({ _id: trusted({ $gt: seq }) })
          .sort({ _id: 1 })
          .limit(READ_MAX)
          .lean<RevocationRecord[]>(),
        newest(),
      ]);
      return {
        entries: found.map(({ _id, userId, notBefore, digest, until }) => ({
          seq: _id,
          userId,
          notBefore,
          digest,
          until,
        })),
        last: Math.max(last, found.at(-1)?._id ?? 0),
      };
    },
  };
}

export type RevocationLog = ReturnType<typeof createRevocationLog>;
