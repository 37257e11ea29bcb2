import { HttpError, messages } from '@cs/errors';
import bodyParser from 'koa-bodyparser';
import type { AppMiddleware } from './context';

export const DEFAULT_BODY_LIMIT = '100kb';

function sendsBody(headers: Record<string, string | string[] | undefined>): boolean {
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
}

/**
 * JSON request bodies only: at most `limit` (413), well-formed (400), a JSON object (400), and
 * any other content type carrying a body is refused (415). Requests without a body get `{}`.
 */
export function jsonBody({ limit = DEFAULT_BODY_LIMIT }: { limit?: string } = {}): AppMiddleware {
  const parse = bodyParser({ enableTypes: ['json'], jsonLimit: limit, strict: true });
  return async function jsonBody(ctx, next) {
    if (sendsBody(ctx.req.headers) && !ctx.is('application/json', '+json')) {
      throw new HttpError(415, messages.unsupportedMediaType);
    }
    await parse(ctx, async () => {
      const body: unknown = ctx.request.body;
      if (body === null || typeof body !== 'object' || Array.isArray(body)) {
        throw new HttpError(400, 'JSON body must be an object');
      }
      await next();
    });
  };
}

/** The parsed body; jsonBody guarantees a plain JSON object (or `{}` when none was sent). */
export function bodyOf(ctx: { request: unknown }): Record<string, unknown> {
  return (ctx.request as { body?: Record<string, unknown> }).body ?? {};
}
