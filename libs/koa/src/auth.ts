import { userIdFromAuthorization } from '@cs/auth';
import type { AppMiddleware } from './context';

/** The contract's protected route: 401 before the handler runs, else `ctx.state.userId`. */
export function requireAuth({ secret }: { secret: string }): AppMiddleware {
  if (!secret) throw new Error('requireAuth needs a secret');
  return async function requireAuth(ctx, next) {
    ctx.state.userId = userIdFromAuthorization(ctx.headers.authorization, secret);
    await next();
  };
}

/**
 * A public route that shows more to a known caller (a draft to its author). No header: anonymous.
 * A header that is there but wrong is still 401, so a stale token is never silently ignored.
 */
export function optionalAuth({ secret }: { secret: string }): AppMiddleware {
  if (!secret) throw new Error('optionalAuth needs a secret');
  return async function optionalAuth(ctx, next) {
    if (ctx.headers.authorization !== undefined) {
      ctx.state.userId = userIdFromAuthorization(ctx.headers.authorization, secret);
    }
    await next();
  };
}
