/**
 * The revocation log: every access token revoked before it expires, as entries numbered 1, 2, 3…
 * with no gap, which the gateway and every service follow (`GET /internal/revocations`, and
 * @cs/auth's revocation feed) to refuse those tokens without a database read of their own.
 *
 * The numbers are @cs/mongo's numbered log: an entry is an insert whose `_id` is its number, so
 * two identity replicas on FerretDB never share or skip one, and every read is by `_id`. The only
 * whole reads are a new reader's first (every entry still kept), the first write of a process
 * (the newest number), and pruning, once a minute. The process's newest known number moves with
 * every entry it writes or reads, so a writer's first try is nearly always free.
 *
 * An entry is kept until every token it refuses has expired, and until every entry before it can
 * go too: pruning deletes a prefix, so what is kept has no gap, and the newest is always kept. A
 * reader that finds neither its own last entry nor the next is behind the kept prefix, or the log
 * started again (a new database): it reads the log whole.
 *
 * One entry per revoked token: the digest is a unique key, so a token revoked again (a logout
 * repeated, two ends of one session at once, on any replica) adds nothing: the insert that loses
 * on the digest means "there already". Unique indexes hold on FerretDB, where a read before the
 * write would not: two writers would both read nothing. Each process makes the key before its
 * first append (oneEntryPerToken), after taking the digest off any later entry of a token that a
 * log from before the key holds twice: the entry stays, so the numbers keep no gap, and the
 * earlier one still refuses the token.
 */
import { notBeforeAt, type Revocation, type RevocationBatch } from '@cs/auth';
import { appendNumbered, isDuplicateKey, readNumbered, trusted } from '@cs/mongo';
import { REVOCATION_DIGEST_KEY, type RevocationModel, type RevocationRecord } from './model';

/** One access token to refuse: whose it is, its digest, and when it expires (seconds). */
export interface RevokedToken {
  userId: string;
  digest: string;
  expiresAt: number;
}

/** The most entries one read of the log answers; a reader far behind reads again. */
export const READ_MAX = 1_000;
/** How many numbers a reader looks up at once while they exist, after the first. */
const WINDOW = 16;
const PRUNE_EVERY_MS = 60_000;

/**
 * The first entry pruning must keep, of `kept` (every entry, in any order): the first one whose
 * tokens may still be valid at `nowS`, or `newest` when none is. A loop, not Math.min(...kept):
 * spreading a log of 130,000 entries into arguments throws.
 */
export function firstNeeded(kept: Pick<RevocationRecord, '_id' | 'until'>[], nowS: number, newest: number): number {
  let first = newest;
  for (const { _id, until } of kept) if (until >= nowS && _id < first) first = _id;
  return first;
}

/** Tries at making the digest's unique key, each after taking the digest off the entries that repeat one. */
const KEY_ATTEMPTS = 3;

/** Thrown through appendNumbered: the entry's digest is in the log already. */
const ALREADY_THERE = Symbol('already there');

const toRevocation = ({ _id, userId, notBefore, digest, until }: RevocationRecord): Revocation => ({
  seq: _id,
  userId,
  notBefore,
  digest,
  until,
});

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
  /** The newest number this process has written or read; undefined until it first looks. */
  let known: number | undefined;

  const entry = (seq: number) => entries.findById(seq).lean<RevocationRecord>();
  const saw = (seq: number) => {
    known = Math.max(known ?? 0, seq);
  };

  /** Every entry still kept, in order: a whole read. */
  const everything = async (): Promise<RevocationRecord[]> => {
    const found = await entries.find({}).lean<RevocationRecord[]>();
    found.sort((a, b) => a._id - b._id);
    saw(found.at(-1)?._id ?? 0);
    return found;
  };

  /** The digest's unique key, made once per process before its first append (see the top). */
  let keyed: Promise<void> | undefined;
  const oneEntryPerToken = async () => {
    for (let attempt = 1; ; attempt++) {
      const withDigest = await entries
        .find({ digest: trusted({ $exists: true }) }, { digest: 1 })
        .lean<Pick<RevocationRecord, '_id' | 'digest'>[]>();
      withDigest.sort((a, b) => a._id - b._id);
      const seen = new Set<string>();
      for (const { _id, digest } of withDigest) {
        if (digest === undefined) continue;
        if (seen.has(digest)) await entries.updateOne({ _id }, { $unset: { digest: 1 } });
        seen.add(digest);
      }
      try {
        await entries.collection.createIndex(...REVOCATION_DIGEST_KEY);
        return;
      } catch (err) {
        // A replica of before the key appended a digest again meanwhile: take it off, and again.
        if (attempt >= KEY_ATTEMPTS) throw err;
      }
    }
  };

  /**
   * One append at a time in a process: writers of one process never race each other for a number
   * (sixteen at once would try 136 numbers); only replicas race, once per entry.
   */
  let queue: Promise<unknown> = Promise.resolve();
  const append = (entry: Omit<RevocationRecord, '_id'>): Promise<void> => {
    const appended = queue.then(() => appendNow(entry));
    queue = appended.catch(() => undefined);
    return appended;
  };

  const appendNow = async (entry: Omit<RevocationRecord, '_id'>): Promise<void> => {
    keyed ??= oneEntryPerToken().catch((err) => {
      keyed = undefined;
      throw err;
    });
    await keyed;
    if (known === undefined) await everything();
    const insert = async (n: number) => {
      try {
        await entries.create({ _id: n, ...entry });
      } catch (err) {
        // Which unique key: the number (taken: the next one), or the digest (revoked already).
        if (isDuplicateKey(err) && entry.digest !== undefined && (await entries.exists({ digest: entry.digest }))) {
          throw ALREADY_THERE;
        }
        throw err;
      }
    };
    let seq: number;
    try {
      seq = await appendNumbered((known ?? 0) + 1, insert);
    } catch (err) {
      if (err === ALREADY_THERE) return;
      throw err;
    }
    saw(seq);
    if (now() - prunedAt > PRUNE_EVERY_MS) {
      prunedAt = now();
      await prune(seq);
    }
  };

  /**
   * Deletes the entries before the first one still needed (or before `newest`): a prefix, so that
   * what is kept stays numbered without a gap.
   */
  const prune = async (newest: number) => {
    const nowS = Math.floor(now() / 1000);
    const kept = await entries.find({}, { until: 1 }).lean<Pick<RevocationRecord, '_id' | 'until'>[]>();
    await entries.deleteMany({ _id: trusted({ $lt: firstNeeded(kept, nowS, newest) }) });
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

    /** These tokens (by user and digest, with their expiry in seconds) are refused. */
    async revokeTokens(tokens: RevokedToken[]): Promise<void> {
      const nowS = now() / 1000;
      for (const { userId, digest, expiresAt } of tokens) {
        if (expiresAt > nowS) await append({ userId, digest, until: expiresAt });
      }
    },

    /** The user's newest not-before (0: never revoked, or long enough ago to be forgotten). */
    async notBeforeOf(userId: string): Promise<number> {
      const found = await entries.find({ userId }, { notBefore: 1 }).lean<Pick<RevocationRecord, 'notBefore'>[]>();
      // A loop: a user's entries are as many as the tokens revoked, too many to spread into Math.max.
      let newest = 0;
      for (const { notBefore } of found) if (notBefore !== undefined && notBefore > newest) newest = notBefore;
      return newest;
    },

    /**
     * The entries after `seq`, at most about READ_MAX, in order, and the log's newest number as
     * far as this read saw (more than the last entry answered when there are more to read).
     */
    async after(seq: number): Promise<RevocationBatch> {
      if (seq === 0) {
        const all = await everything();
        return { entries: all.map(toRevocation), last: all.at(-1)?._id ?? 0 };
      }
      const found = await readNumbered(seq, entry, { window: WINDOW, atLeast: READ_MAX });
      if (found.length === 0 && !(await entry(seq))) {
        // Neither the reader's last entry nor the next: the log started again. Read it whole.
        const all = await everything();
        return { entries: all.map(toRevocation), last: all.at(-1)?._id ?? 0 };
      }
      const last = seq + found.length;
      saw(last);
      return { entries: found.map(toRevocation), last: found.length >= READ_MAX ? last + 1 : last };
    },
  };
}

export type RevocationLog = ReturnType<typeof createRevocationLog>;
