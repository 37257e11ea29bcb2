/**
 * Password reset by e-mail.
 *
 * A request answers the same `202` whether or not the address has an account, and the answer
 * never waits for the account's lookup or the e-mail: those run after it, so both cases take the
 * same time (only the per-address count, kept for every address alike, is awaited).
 *
 * The token is `<user id>.<32 random bytes, base64url>`. Only a SHA-256 of the random part is
 * stored, in the user's one reset record (`_id` is the user id): issuing a new token replaces the
 * record, so every earlier token stops working at once, on any server, without a query by any
 * other field. A token is used once: its hash is inserted into `password_reset_uses`, whose `_id`
 * is unique, before the password is set, so of two confirmations racing with one token exactly
 * one inserts and the other gets 400 (FerretDB's filtered updates are not atomic; its unique
 * indexes are enforced).
 *
 * A token is bound to the password it was sent under (the account's version then): the password
 * is set only while that version is still the current one (password-store.ts), so a change of the
 * password voids every earlier token, and of a change and a confirmation racing, only the one that
 * takes effect reports success. A successful login retires the outstanding token (`retire`): its
 * hash is marked used, as a confirmation would, so a confirmation already under way loses too.
 * A password set through a reset ends every session of the account (sessions.ts).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { HttpError, messages as httpMessages } from '@cs/errors';
import type { Logger } from '@cs/log';
import { claimedByInsert, trusted, upsertRacing } from '@cs/mongo';
import bcrypt from 'bcrypt';
import type { Connection } from 'mongoose';
import type { PasswordTurn } from '../accounts/accounts';
import { messages } from '../accounts/credentials';
import type { UserModel } from '../accounts/model';
import type { PasswordStore } from '../accounts/password-store';
import type { Sessions } from '../sessions/sessions';
import type { Mailer } from './mailer';
import { passwordResetModel, passwordResetRequestModel, passwordResetUseModel } from './model';

/** E-mails one address may be sent in RESET_WINDOW_MS, whether it has an account or not. */
export const RESETS_PER_ADDRESS = 3;
export const RESET_WINDOW_MS = 60 * 60_000;

const TOKEN = /^([0-9a-f]{24})\.([A-Za-z0-9_-]{43})$/;

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

export interface PasswordResets {
  /** Counts the request, and sends the e-mail after answering when the address has an account. */
  request(email: string): Promise<void>;
  /**
   * Sets the password once per token; 400 with one message for any token that cannot. The token's
   * check and the hash run in `passwordTurn`.
   */
  confirm(token: string, newPassword: string, passwordTurn: PasswordTurn): Promise<void>;
  /** After a successful login: the outstanding token, if any, stops working. */
  retire(userId: string): Promise<void>;
  /** Forgets a deleted user's reset. */
  forget(userId: string): Promise<void>;
  /** Deletes used-token marks and counts older than any token or window; returns how many. */
  prune(): Promise<number>;
}

export function createPasswordResets({
  connection,
  users,
  passwords,
  sessions,
  mailer,
  ttlMs,
  webUrl,
  bcryptCost,
  logger,
  now = Date.now,
}: {
  connection: Connection;
  users: UserModel;
  passwords: PasswordStore;
  /** A new password ends every session of the account. */
  sessions: Pick<Sessions, 'endAll'>;
  mailer: Mailer | undefined;
  ttlMs: number;
  /** The web client's address; the e-mail links to its "Set a new password" screen. */
  webUrl: string;
  bcryptCost: number;
  logger: Logger;
  now?: () => number;
}): PasswordResets {
  const resets = passwordResetModel(connection);
  const uses = passwordResetUseModel(connection);
  const counts = passwordResetRequestModel(connection);

  /** Throws 429 once this address has had its e-mails for the window. Not exact under races. */
  async function count(email: string): Promise<void> {
    const id = sha256(`reset\n${email}`);
    const at = now();
    const record = await counts.findById(id).lean();
    const fresh = !record || at - record.windowStartedAt.getTime() >= RESET_WINDOW_MS;
    if (!fresh && record.count >= RESETS_PER_ADDRESS) {
      const retryAfter = Math.ceil((record.windowStartedAt.getTime() + RESET_WINDOW_MS - at) / 1000);
      throw new HttpError(429, httpMessages.tooManyRequests, { headers: { 'Retry-After': String(retryAfter) } });
    }
    const update = fresh ? { $set: { count: 1, windowStartedAt: new Date(at) } } : { $inc: { count: 1 } };
    // Two first requests that race to create the count: the second one counts in the first's.
    await upsertRacing(
      () => counts.updateOne({ _id: id }, update, { upsert: true }),
      () => counts.updateOne({ _id: id }, { $inc: { count: 1 } }),
    );
  }

  async function send(email: string): Promise<void> {
    const user = await users.findOne({ email }, { _id: 1, version: 1 }).lean();
    if (!user || !mailer) return;
    const userId = user._id.toHexString();
    const secret = randomBytes(32).toString('base64url');
    const expiresAt = new Date(now() + ttlMs);
    const userVersion = user.version ?? 0;
    await resets.replaceOne({ _id: userId }, { tokenHash: sha256(secret), expiresAt, userVersion }, { upsert: true });
    // The address rides along for the screen's username field, which password managers file the new password under.
    const link = `${webUrl}/#/reset-password?token=${userId}.${secret}&email=${encodeURIComponent(email)}`;
    const minutes = Math.max(1, Math.round(ttlMs / 60_000));
    await mailer.send({
      to: email,
      subject: 'Set a new password',
      text: [
        'Someone asked to set a new password for the account with this address.',
        `To set one, open this link within ${minutes} minutes: ${link}`,
        'If it was not you, ignore this e-mail: your password stays as it is.',
      ].join('\n\n'),
      html: [
        '<p>Someone asked to set a new password for the account with this address.</p>',
        `<p><a href="${link}">Set a new password</a> (the link works once, for ${minutes} minutes).</p>`,
        '<p>If it was not you, ignore this e-mail: your password stays as it is.</p>',
      ].join('\n'),
    });
  }

  const invalid = () => new HttpError(400, messages.invalidResetToken);

  return {
    async request(email) {
      if (!mailer) throw new HttpError(503, messages.resetUnavailable, { expose: true });
      await count(email);
      void send(email).catch((err: unknown) => logger.warn({ err }, 'could not send a password-reset e-mail'));
    },

    async confirm(token, newPassword, passwordTurn) {
      const match = TOKEN.exec(token);
      if (!match) throw invalid();
      const [, userId = '', secret = ''] = match;
      const { reset, tokenHash, hash } = await passwordTurn(async () => {
        const tokenHash = sha256(secret);
        const reset = await resets.findById(userId).lean();
        const same = reset && timingSafeEqual(Buffer.from(reset.tokenHash), Buffer.from(tokenHash));
        if (!reset || !same || reset.expiresAt.getTime() <= now()) throw invalid();
        // Used already, by a racer or before: the unique `_id` lets one confirmation use it.
        if (!(await claimedByInsert(() => uses.create({ _id: tokenHash, at: new Date(now()) })))) throw invalid();
        return { reset, tokenHash, hash: await bcrypt.hash(newPassword, bcryptCost) };
      });
      // Refused when the account was deleted, or its password changed, since the token was sent.
      await passwords.write(userId, { checked: reset.userVersion ?? 0, hash, refused: invalid });
      await sessions.endAll(userId);
      await resets.deleteOne({ _id: userId, tokenHash });
    },

    async retire(userId) {
      const reset = await resets.findById(userId).lean();
      if (!reset) return;
      // Taken already means used already, by a confirmation under way or done: nothing left to retire.
      await claimedByInsert(() => uses.create({ _id: reset.tokenHash, at: new Date(now()) }));
      await resets.deleteOne({ _id: userId, tokenHash: reset.tokenHash });
    },

    async forget(userId) {
      await resets.deleteOne({ _id: userId });
    },

    async prune() {
      const [used, counted] = await Promise.all([
        uses.deleteMany({ at: trusted({ $lt: new Date(now() - ttlMs) }) }),
        counts.deleteMany({ windowStartedAt: trusted({ $lt: new Date(now() - RESET_WINDOW_MS) }) }),
      ]);
      return used.deletedCount + counted.deletedCount;
    },
  };
}
