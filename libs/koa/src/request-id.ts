import { randomUUID } from 'node:crypto';
import type { AppMiddleware } from './context';

/** Ids we accept from a caller: short, and nothing that could split a header or a log line. */
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestId(): AppMiddleware {
  return async function requestId(ctx, next) {
    const given = ctx.get('x-request-id');
    ctx.state.requestId = REQUEST_ID.test(given) ? given : randomUUID();
    ctx.set('x-request-id', ctx.state.requestId);
    await next();
  };
}
