import { requestIdFrom } from '@cs/log';
import type { AppMiddleware } from './context';

/** Keeps the caller's `x-request-id` (the gateway's) or makes one, and sends it back. */
export function requestId(): AppMiddleware {
  return async function requestId(ctx, next) {
    ctx.state.requestId = requestIdFrom(ctx.headers['x-request-id']);
    ctx.set('x-request-id', ctx.state.requestId);
    await next();
  };
}
