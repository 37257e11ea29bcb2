/**
 * The calls that verify the account's e-mail address and change it. Both end with a link in an
 * e-mail, whose token the page it opens hands to `confirm…` only when the person says so: a GET
 * never uses a token up, so a mail scanner that opens the link changes nothing.
 */
import type { Calls, Fetch, Raw, SessionKeeping } from './calls.js';
import type { SessionStore } from './session.js';
import { accountOf } from './session-account.js';

export function addressCalls(
  raw: Raw,
  run: Calls['run'],
  keeping: SessionKeeping,
  store: SessionStore,
  doFetch: Fetch,
) {
  /**
   * After a link's confirmation, the session here, if any, learns its account's address and
   * whether it is verified, as they now are. The link may have been another account's, or the
   * change may have ended the session: the confirmation stands either way, and it is not for this
   * look to end the session, nor to say it ended (the next call does).
   */
  const settle = async <T>(answer: T): Promise<T> => {
    const token = store.load()?.token;
    const account = token && (await accountOf(keeping, doFetch, token).catch(() => undefined));
    const session = store.load();
    if (account && session) store.save({ ...session, email: account.email, emailVerified: account.emailVerified });
    return answer;
  };
  return {
    /** E-mails the signed-in person a link that verifies their address (one a minute: 429 with `retryAfter`). */
    requestEmailVerification: () => run(() => raw.POST('/api/auth/email-verification')).then(() => undefined),
    /** Verifies the address with the token from the e-mail's link: `{email, emailVerified: true}`. */
    confirmEmailVerification: (token: string) =>
      run(() => raw.POST('/api/auth/email-verification/confirm', { body: { token } })).then(settle),
    /**
     * E-mails `newEmail` a link that moves the account to it (and the current address a notice);
     * the same answer whether or not the address is taken. A wrong password is an ApiError 401.
     */
    requestEmailChange: (newEmail: string, password: string) =>
      run(() => raw.POST('/api/auth/email-change', { body: { newEmail, password } })).then(() => undefined),
    /** Moves the account to the new address with the token from its link: `{email, emailVerified: true}`. */
    confirmEmailChange: (token: string) =>
      run(() => raw.POST('/api/auth/email-change/confirm', { body: { token } })).then(settle),
  };
}
