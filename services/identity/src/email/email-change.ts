/**
 * A change of the account's address: asked for with the current password (or, for an account
 * without one, a fresh sign-in: accounts.ts `confirmOwner`), confirmed by a link mailed to the new
 * address, noticed by a mail with no link to the old one.
 *
 * The request answers the same 202, with the same work before the answer, whether or not the new
 * address has an account: the token is issued in both cases (the pace counts from it), and only
 * after the answer is the address looked up. A free address gets the link; a taken one gets a
 * notice instead (email-mails.ts `addressTakenMail`), and its token, never mailed, is never used.
 * The old address always gets its notice, so its inbox tells nothing either.
 *
 * The confirmation moves the account from the address the token was issued for to the new one, and
 * marks it verified: the link proved the new address. The unique index on the address decides a
 * race with a registration or another change to it (409). After it, login takes the new address
 * only; every password-reset link and every verification link sent before stops working; and every
 * session ends but the confirming caller's own (other-sessions.ts).
 */
import { HttpError, messages as httpMessages } from '@cs/errors';
import type { Logger } from '@cs/log';
import { isDuplicateKey } from '@cs/mongo';
import type { Connection } from 'mongoose';
import type { Accounts, Client, Proof } from '../accounts/accounts';
import type { UserModel } from '../accounts/model';
import { createOneTimeTokens } from '../one-time-tokens/one-time-tokens';
import type { Mailer } from '../password-reset/mailer';
import { endOtherSessions } from '../sessions/other-sessions';
import type { Sessions } from '../sessions/sessions';
import { addressTakenMail, changeLinkMail, changeNoticeMail } from './email-mails';
import type { VerifiedAddress } from './email-verification';
import { checkMailPace } from './mail-pace';
import { emailMessages } from './messages';

/** Who confirms a change, when the request carried a valid access token: its user and its second. */
export interface Caller {
  userId: string;
  issuedAt: number;
}

export interface EmailChanges {
  /**
   * Checks the proof, then mails the link to `newEmail` (normalized) after answering: 503 without
   * SMTP, 429 within the pace, 401 for a wrong password, 400 for the account's own address.
   */
  request(userId: string, change: { newEmail: string; proof: Proof }, client: Client): Promise<void>;
  /** Moves the account to the token's address, once; 400 for any token that cannot, 409 when it is taken. */
  confirm(token: string, caller: Caller | undefined): Promise<VerifiedAddress>;
  /** The account's link stops working (it was deleted). */
  forget(userId: string): Promise<void>;
  /** Deletes expired links and old marks of used ones; returns how many. */
  prune(): Promise<number>;
}

export function createEmailChanges({
  connection,
  users,
  accounts,
  sessions,
  forgetLinks,
  mailer,
  ttlMs,
  paceMs,
  webUrl,
  logger,
  now = Date.now,
}: {
  connection: Connection;
  users: UserModel;
  accounts: Pick<Accounts, 'confirmOwner'>;
  sessions: Pick<Sessions, 'list' | 'end' | 'endAll'>;
  /** After a change: the account's password-reset and verification links, sent to the old address, stop working. */
  forgetLinks: (userId: string) => Promise<void>;
  mailer: Mailer | undefined;
  /** EMAIL_TOKEN_TTL. */
  ttlMs: number;
  /** EMAIL_RESEND_INTERVAL (mail-pace.ts). */
  paceMs: number;
  /** The web client's address; the mail links to its "Confirm your new address" screen. */
  webUrl: string;
  logger: Logger;
  now?: () => number;
}): EmailChanges {
  const tokens = createOneTimeTokens<{ from: string; to: string }>(connection, {
    purpose: 'email-change',
    ttlMs,
    invalid: () => new HttpError(400, emailMessages.invalidChangeToken),
    now,
  });

  /** The mails of a change, after its answer: the link or the notice to the new address, the notice to the old. */
  async function send(mail: Mailer, from: string, to: string, token: string): Promise<void> {
    const taken = await users.exists({ email: to });
    const link = `${webUrl}/#/confirm-email-change?token=${token}`;
    await Promise.all([
      mail.send(taken ? addressTakenMail(to) : changeLinkMail(to, link, ttlMs)),
      mail.send(changeNoticeMail(from)),
    ]);
  }

  return {
    async request(userId, { newEmail, proof }, client) {
      if (!mailer) throw new HttpError(503, emailMessages.unavailable, { expose: true });
      await checkMailPace(tokens, userId, { paceMs, now: now() });
      await accounts.confirmOwner(userId, proof, client);
      const user = await users.findById(userId, { email: 1 }).lean();
      if (!user) throw new HttpError(401, httpMessages.invalidToken);
      if (user.email === newEmail) throw new HttpError(400, emailMessages.sameAddress);
      const token = await tokens.issue(userId, { from: user.email, to: newEmail });
      void send(mailer, user.email, newEmail, token).catch((err: unknown) =>
        logger.warn({ err }, 'could not send the e-mails of an address change'),
      );
    },

    async confirm(token, caller) {
      const { subject: userId, payload } = await tokens.redeem(token);
      let moved: { matchedCount: number };
      try {
        // Only from the address the change was asked from: a change confirmed since, or a deleted
        // account, leaves nothing to move.
        moved = await users.updateOne(
          { _id: userId, email: payload.from },
          { $set: { email: payload.to, emailVerified: true } },
        );
      } catch (err) {
        if (isDuplicateKey(err)) throw new HttpError(409, emailMessages.addressTaken, { cause: err });
        throw err;
      }
      if (moved.matchedCount === 0) throw new HttpError(400, emailMessages.invalidChangeToken);
      await forgetLinks(userId);
      await endOtherSessions(sessions, userId, caller?.userId === userId ? caller : undefined);
      return { email: payload.to, emailVerified: true };
    },

    forget: (userId) => tokens.forget(userId),
    prune: () => tokens.prune(),
  };
}
