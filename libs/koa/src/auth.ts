import { type TokenVerifier, userIdFromAuthorization } from '@cs/auth';
import type { AppMiddleware } from './context';

/**
 * The contract's protected route: 401 before the handler runs, else `ctx.state.userId`. The
 * verifier checks the token and whether it was revoked, from memory.
 */
export function requireAuth(tokens: TokenVerifier): AppMiddleware {
  return async function requireAuth(ctx, next) {
    ctx.state.userId = await tokens.userIdFromAuthorization(ctx.headers.authorization);
    await next();
  };
}

/**
 * A public route that shows more to a known caller (a draft to its author). No header: anonymous.
 * A header that is there but wrong is still 401, so a stale token is never silently ignored.
 */
export function optionalAuth(tokens: TokenVerifier): AppMiddleware {
  return async function optionalAuth(ctx, next) {
    if (ctx.headers.authorization !== undefined) {
      ctx.state.userId = await tokens.userIdFromAuthorization(ctx.headers.authorization);
    }
    await next();
  };
}

/**
 * An `/internal` route, which only our own services call (the gateway never routes `/internal`),
 * with a token they sign on the spot for the user they act for: its signature and expiry are
 * checked, not the revocation list, which is about the tokens identity gave to clients. A deleted
 * account's data is still released and purged this way after its tokens were revoked.
 */
export function requireInternalCaller({ secret }: { secret: string }): AppMiddleware {
  if (!secret) throw new Error('requireInternalCaller needs a secret');
  return async function requireInternalCaller(ctx, next) {
    ctx.state.userId = userIdFromAuthorization(ctx.headers.authorization, secret);
    await next();
  };
}
