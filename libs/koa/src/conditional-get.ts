import { createHash } from 'node:crypto';
import type { AppMiddleware } from './context';

/**
 * HTTP caching for a JSON read: a strong ETag from the body's bytes, and 304 with no body when
 * the client's If-None-Match already names it. Only for 200 answers to GET and HEAD.
 *
 * The If-None-Match comparison is RFC 9110's (§13.1.2, weak comparison), and only it: Koa's
 * `ctx.fresh` also refuses a 304 when the request says `Cache-Control: no-cache`, and fetch (in
 * browsers and in Node) adds exactly that to every request that sets If-None-Match itself. That
 * directive is for caches on the way, not for the origin answering a conditional request.
 */
function noneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => opaque(tag) === opaque(etag));
}

export function conditionalGet(): AppMiddleware {
  return async function conditionalGet(ctx, next) {
    await next();
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || ctx.status !== 200 || ctx.body === undefined) return;
    const bytes = Buffer.from(JSON.stringify(ctx.body));
    const etag = `"${createHash('sha1').update(bytes).digest('base64url')}"`;
    ctx.set('ETag', etag);
    // Private: the same URL answers differently to the author of a draft.
    ctx.set('Cache-Control', 'private, no-cache');
    ctx.type = 'application/json';
    if (noneMatch(ctx.get('If-None-Match') || undefined, etag)) {
      ctx.status = 304;
      ctx.body = null;
      return;
    }
    ctx.body = bytes;
  };
}
