/**
 * How the gateway and every service check a client's access token: the signature, the expiry and
 * the claims (tokens.ts), then the revocation list in memory (revocations.ts). No database read.
 *
 * A process that has not yet read the list once cannot tell a revoked token from a good one. A
 * request that comes then waits for the first read, up to FIRST_READ_WAIT_MS: a new replica that a
 * balancer or Docker's DNS sends requests to before its first read (tens of ms after it listens)
 * answers them as late as that, not with an error. Past the wait (identity is away) it answers 503
 * with Retry-After, and its readiness says so, rather than let a revoked token through.
 * Once it has, a feed that stops answering leaves it on the list it has: tokens revoked since are
 * let through while the feed is down, and the operator is told (a metric, and a notice in
 * readiness, after STALE_AFTER_MS).
 */
import { HttpError, messages } from '@cs/errors';
import type { RevocationList } from './revocations';
import { bearerToken, type VerifiedToken, verifyClaims, verifySigned } from './tokens';

/** Past this without being up to date, the list is stale: the revocation bound no longer holds. */
export const STALE_AFTER_MS = 5_000;
/** How long a request waits for the list's first read before it gets 503. */
export const FIRST_READ_WAIT_MS = 2_000;

export interface TokenVerifier {
  /**
   * The user id of a request's `Authorization` header; rejects with 401, or with 503 when the list
   * has not been read within FIRST_READ_WAIT_MS.
   */
  userIdFromAuthorization(header: string | undefined): Promise<string>;
  /**
   * Logout's check: the request's token when it is one we signed, expired or revoked as it may
   * be, and whether it was revoked already (as far as the list knows); throws 401 for any other
   * (no `Bearer `, not ours). Never waits for the list: a token it cannot yet tell is not revoked.
   */
  signedToken(header: string | undefined): SignedToken;
  /** Whether the process can verify: it has read the revocation list once. */
  ready(): boolean;
  /** A sentence for the operator when the revocation list is stale; undefined when it is current. */
  notice(now?: number): string | undefined;
}

/** A token we signed, as logout sees it (signedToken). */
export interface SignedToken extends VerifiedToken {
  token: string;
  revoked: boolean;
}

export function createTokenVerifier(secret: string, revocations: RevocationList): TokenVerifier {
  if (!secret) throw new Error('a token verifier needs a secret');
  return {
    async userIdFromAuthorization(header) {
      const token = bearerToken(header);
      const { userId, issuedAt } = verifyClaims(token, secret);
      if (revocations.currentAt === undefined && !(await revocations.whenCurrent(FIRST_READ_WAIT_MS))) {
        throw new HttpError(503, messages.tokensNotCheckable, { headers: { 'Retry-After': '1' }, expose: true });
      }
      if (revocations.refuses(token, userId, issuedAt)) throw new HttpError(401, messages.invalidToken);
      return userId;
    },

    signedToken(header) {
      const token = bearerToken(header);
      const claims = verifySigned(token, secret);
      return { ...claims, token, revoked: revocations.refuses(token, claims.userId, claims.issuedAt) };
    },

    ready: () => revocations.currentAt !== undefined,

    notice(now = Date.now()) {
      if (revocations.currentAt === undefined) return 'the revocation list has not been read yet';
      const age = now - revocations.currentAt;
      if (age <= STALE_AFTER_MS) return undefined;
      return `the revocation list has not been brought up to date for ${Math.round(age / 1000)} s: tokens revoked since then are still accepted`;
    },
  };
}
