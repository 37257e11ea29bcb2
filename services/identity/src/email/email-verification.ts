/**
 * Verification of an account's address: a link mailed to it, whose token the web client sends back
 * once the person presses Confirm (`POST /api/auth/email-verification/confirm`; a GET never uses a
 * token, so a mail scanner that opens the link changes nothing).
 *
 * The token (one-time-tokens.ts: random, kept as a hash, used once, superseded by the next one,
 * EMAIL_TOKEN_TTL long) is for the address it was mailed to: its payload holds it, and the account
 * is marked verified only while that is still its address. A link sent before an e-mail change is
 * refused, even if the change's own cleanup (`forget`) has not reached it. Verification never goes
 * back: an e-mail change confirms its new address by the link it mails, so the account stays
 * verified (the gateway's REQUIRE_VERIFIED_EMAIL cache relies on it).
 */
import { HttpError, messages as httpMessages } from '@cs/errors';
import type { Logger } from '@cs/log';
import type { Connection } from 'mongoose';
import type { UserModel } from '../accounts/model';
import { createOneTimeTokens } from '../one-time-tokens/one-time-tokens';
import type { Mailer } from '../password-reset/mailer';
import { verificationMail } from './email-mails';
import { checkMailPace } from './mail-pace';
import { emailMessages } from './messages';

export interface VerifiedAddress {
  email: string;
  emailVerified: true;
}

export interface EmailVerifications {
  /**
   * The first link, to a new account, sent without the registration waiting for it (nothing
   * without SMTP). The account is new, so it is unverified: nothing is read.
   */
  welcome(userId: string, email: string): void;
  /** A new link to the caller's address: 503 without SMTP, 409 once verified, 429 within the pace. */
  request(userId: string): Promise<void>;
  /** Marks the token's account verified, once; 400 with one message for any token that cannot. */
  confirm(token: string): Promise<VerifiedAddress>;
  /** Whether the account's address is verified; false for an account that is gone. */
  isVerified(userId: string): Promise<boolean>;
  /** The account's link stops working (its address changed, or it was deleted). */
  forget(userId: string): Promise<void>;
  /** Deletes expired links and old marks of used ones; returns how many. */
  prune(): Promise<number>;
}

export function createEmailVerifications({
  connection,
  users,
  mailer,
  ttlMs,
  paceMs,
  webUrl,
  logger,
  now = Date.now,
}: {
  connection: Connection;
  users: UserModel;
  mailer: Mailer | undefined;
  /** EMAIL_TOKEN_TTL. */
  ttlMs: number;
  /** EMAIL_RESEND_INTERVAL (mail-pace.ts). */
  paceMs: number;
  /** The web client's address; the mail links to its "Verify your address" screen. */
  webUrl: string;
  logger: Logger;
  now?: () => number;
}): EmailVerifications {
  const tokens = createOneTimeTokens<{ email: string }>(connection, {
    purpose: 'email-verification',
    ttlMs,
    invalid: () => new HttpError(400, emailMessages.invalidVerificationToken),
    now,
  });

  /** The account's next link, for `email`; the one before stops working. */
  const issueLink = async (userId: string, email: string) =>
    `${webUrl}/#/verify-email?token=${await tokens.issue(userId, { email })}`;
  const logFailure = (err: unknown) => logger.warn({ err }, 'could not send an e-mail verification link');

  return {
    welcome(userId, email) {
      if (!mailer) return;
      const first = async () => mailer.send(verificationMail(email, await issueLink(userId, email), ttlMs));
      void first().catch(logFailure);
    },

    async request(userId) {
      if (!mailer) throw new HttpError(503, emailMessages.unavailable, { expose: true });
      const user = await users.findById(userId, { email: 1, emailVerified: 1 }).lean();
      if (!user) throw new HttpError(401, httpMessages.invalidToken);
      if (user.emailVerified === true) throw new HttpError(409, emailMessages.alreadyVerified);
      await checkMailPace(tokens, userId, { paceMs, now: now() });
      // The token is issued before the answer, so the pace holds for the next request; the mail
      // goes after it, as password reset's does, and a failure is logged.
      const link = await issueLink(userId, user.email);
      void mailer.send(verificationMail(user.email, link, ttlMs)).catch(logFailure);
    },

    async confirm(token) {
      const { subject: userId, payload } = await tokens.redeem(token);
      // Only while the address the link went to is still the account's (and the account exists).
      const marked = await users.updateOne({ _id: userId, email: payload.email }, { $set: { emailVerified: true } });
      if (marked.matchedCount === 0) throw new HttpError(400, emailMessages.invalidVerificationToken);
      return { email: payload.email, emailVerified: true };
    },

    async isVerified(userId) {
      const user = await users.findById(userId, { emailVerified: 1 }).lean();
      return user?.emailVerified === true;
    },

    forget: (userId) => tokens.forget(userId),
    prune: () => tokens.prune(),
  };
}
