import { createHash } from 'node:crypto';
import type { AppMiddleware } from './context';

/**
 * HTTP caching for a JSON read: a strong ETag from the body's bytes, and 304 with no body when
 * the client's If-None-Match already names it. Only for 200 answers to GET and HEAD.
 */
export function conditionalGet(): AppMiddleware {
  return async function conditionalGet(ctx, next) {
    await next();
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || ctx.status !== 200 || ctx.body === undefined) return;
    const bytes = Buffer.from(JSON.stringify(ctx.body));
    ctx.set('ETag', `"${createHash('sha1').update(bytes).digest('base64url')}"`);
    // Private: the same URL answers differently to the author of a draft.
    ctx.set('Cache-Control', 'private, no-cache');
    ctx.type = 'application/json';
    if (ctx.fresh) {
      ctx.status = 304;
      ctx.body = null;
      return;
    }
    ctx.body = bytes;
  };
}
