/**
 * Tokens that stand for something once: an address to verify, an address to change to, a sign-in
 * to finish. Each purpose is a store of its own, over shared collections.
 *
 * A token is `<subject>.<32 random bytes, base64url>`. Only a SHA-256 of the random part is kept,
 * in the subject's one record for the purpose (`_id` is `<purpose>:<subject>`): issuing a new
 * token replaces the record, so the one before stops working at once, on any server. A token is
 * used once: its hash is inserted into `one_time_token_uses`, whose `_id` is unique, before what it
 * stands for is done, so of two redemptions racing with one token exactly one inserts (FerretDB's
 * filtered updates are not atomic; its unique indexes are enforced). Password reset keeps its own
 * tokens (password-reset.ts): they are bound to the password's version as well.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { claimedByInsert, trusted } from '@cs/mongo';
import type { Connection } from 'mongoose';
import { oneTimeTokenModel, oneTimeTokenUseModel } from './model';

/** A subject is a user id or another id of ours: letters, digits, `-` and `_`. */
const TOKEN = /^([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9_-]{43})$/;

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

export interface OneTimeTokens<P extends Record<string, unknown>> {
  /** A new token for `subject`, standing for `payload`; the subject's token before it stops working. */
  issue(subject: string, payload: P): Promise<string>;
  /**
   * What the token stands for, once; `invalid()` for a token that is malformed, unknown,
   * superseded, expired or used.
   */
  redeem(token: string): Promise<{ subject: string; payload: P }>;
  /** When the subject's live token was issued, if it has one (the pace of mails is counted from it). */
  issuedAt(subject: string): Promise<Date | undefined>;
  /** The subject's live token stops working (a deleted account's, an address changed meanwhile). */
  forget(subject: string): Promise<void>;
  /** Deletes expired tokens and the marks of tokens too old to be redeemed anyway; returns how many. */
  prune(): Promise<number>;
}

export function createOneTimeTokens<P extends Record<string, unknown>>(
  connection: Connection,
  {
    purpose,
    ttlMs,
    invalid,
    now = Date.now,
  }: {
    /** Names the store: `email-verification`, `oidc-login`… */
    purpose: string;
    ttlMs: number;
    /** The error for any token that cannot be redeemed: one message for every reason. */
    invalid: () => Error;
    now?: () => number;
  },
): OneTimeTokens<P> {
  const tokens = oneTimeTokenModel(connection);
  const uses = oneTimeTokenUseModel(connection);
  const idOf = (subject: string) => `${purpose}:${subject}`;

  return {
    async issue(subject, payload) {
      const secret = randomBytes(32).toString('base64url');
      const at = now();
      await tokens.replaceOne(
        { _id: idOf(subject) },
        { tokenHash: sha256(secret), payload, issuedAt: new Date(at), expiresAt: new Date(at + ttlMs) },
        { upsert: true },
      );
      return `${subject}.${secret}`;
    },

    async redeem(token) {
      const match = TOKEN.exec(token);
      if (!match) throw invalid();
      const [, subject = '', secret = ''] = match;
      const tokenHash = sha256(secret);
      const record = await tokens.findById(idOf(subject)).lean();
      const same = record && timingSafeEqual(Buffer.from(record.tokenHash), Buffer.from(tokenHash));
      if (!record || !same || record.expiresAt.getTime() <= now()) throw invalid();
      // Used already, by a racer or before: the unique `_id` lets one redemption through.
      const use = { _id: idOf(tokenHash), at: new Date(now()) };
      if (!(await claimedByInsert(() => uses.create(use)))) throw invalid();
      await tokens.deleteOne({ _id: idOf(subject), tokenHash });
      return { subject, payload: record.payload as P };
    },

    async issuedAt(subject) {
      const record = await tokens.findById(idOf(subject), { issuedAt: 1 }).lean();
      return record?.issuedAt;
    },

    async forget(subject) {
      await tokens.deleteOne({ _id: idOf(subject) });
    },

    async prune() {
      const at = new Date(now());
      const ours = trusted({ $regex: `^${purpose}:` });
      const [expired, used] = await Promise.all([
        tokens.deleteMany({ _id: ours, expiresAt: trusted({ $lt: at }) }),
        // A token is refused as expired once its lifetime has passed since its use at the latest.
        uses.deleteMany({ _id: ours, at: trusted({ $lt: new Date(at.getTime() - ttlMs) }) }),
      ]);
      return expired.deletedCount + used.deletedCount;
    },
  };
}
