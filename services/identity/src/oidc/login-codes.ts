/**
 * Login codes: what the callback hands the client in `#code=`, and `exchange` trades for a session.
 *
 * A code is a one-time token (one-time-tokens/), valid LOGIN_CODE_TTL_MS and used once, standing
 * for the account and the challenge of the client that started the flow. Its subject is the flow's
 * state, not the account, so that two flows of one account (two tabs) each keep their own code.
 * Only the verifier whose SHA-256 is that challenge redeems it, so a code planted in someone else's
 * browser (login CSRF) or read from a URL is worth nothing; a wrong verifier uses the code up, as a
 * client that did not start the flow has seen it.
 */
import { createHash } from 'node:crypto';
import { oidcMessages } from '@cs/contract';
import { HttpError } from '@cs/errors';
import type { Connection } from 'mongoose';
import { createOneTimeTokens } from '../one-time-tokens/one-time-tokens';

export const LOGIN_CODE_TTL_MS = 60_000;

export interface LoginCodes {
  /** A new code, for the flow of `state`, logging into `userId`, redeemable by the verifier of `challenge`. */
  issue(state: string, userId: string, challenge: string): Promise<string>;
  /** The account a code logs into; 400 for a code unknown, used or expired, or a wrong verifier. */
  redeem(code: string, verifier: string): Promise<string>;
  prune(): Promise<number>;
}

export function createLoginCodes(connection: Connection): LoginCodes {
  const tokens = createOneTimeTokens<{ userId: string; challenge: string }>(connection, {
    purpose: 'oidc-login',
    ttlMs: LOGIN_CODE_TTL_MS,
    invalid: () => new HttpError(400, oidcMessages.invalidCode),
  });
  return {
    issue: (state, userId, challenge) => tokens.issue(state, { userId, challenge }),
    async redeem(code, verifier) {
      const { payload } = await tokens.redeem(code);
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      if (challenge !== payload.challenge) throw new HttpError(400, oidcMessages.wrongVerifier);
      return payload.userId;
    },
    prune: () => tokens.prune(),
  };
}
