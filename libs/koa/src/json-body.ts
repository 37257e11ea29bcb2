import { HttpError, messages } from '@cs/errors';
import bodyParser from 'koa-bodyparser';
import type { AppMiddleware } from './context';

export const DEFAULT_BODY_LIMIT = '100kb';

function sendsBody(headers: Record<string, string | string[] | undefined>): boolean {
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
}

/** The body encodings we decode (the limit counts the decoded bytes). */
const ENCODINGS = new Set(['gzip', 'deflate', 'identity']);
const encodingMessages = {
  unsupported: 'Content-Encoding must be gzip, deflate or identity',
  undecodable: 'Request body does not match its Content-Encoding',
} as const;

/** zlib's own failures (Z_DATA_ERROR, Z_BUF_ERROR, …): the bytes are not what the encoding says. */
function isDecodingError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('Z_');
}

/**
 * JSON request bodies only: at most `limit` (413), well-formed (400), a JSON object (400), and
 * any other content type carrying a body is refused (415). A body in an encoding we do not decode
 * is 415, and one that is not in the encoding it names is 400. Requests without a body get `{}`.
 */
export function jsonBody({ limit = DEFAULT_BODY_LIMIT }: { limit?: string } = {}): AppMiddleware {
  const parse = bodyParser({ enableTypes: ['json'], jsonLimit: limit, strict: true });
  return async function jsonBody(ctx, next) {
    if (sendsBody(ctx.req.headers)) {
      if (!ctx.is('application/json', '+json')) throw new HttpError(415, messages.unsupportedMediaType);
      const encoding = (ctx.get('content-encoding') || 'identity').trim().toLowerCase();
      if (!ENCODINGS.has(encoding)) throw new HttpError(415, encodingMessages.unsupported);
    }
    let reading = true;
    try {
      await parse(ctx, async () => {
        reading = false;
        const body: unknown = ctx.request.body;
        if (body === null || typeof body !== 'object' || Array.isArray(body)) {
          throw new HttpError(400, 'JSON body must be an object');
        }
        await next();
      });
    } catch (err) {
      if (reading && isDecodingError(err)) throw new HttpError(400, encodingMessages.undecodable, { cause: err });
      throw err;
    }
  };
}

/** The parsed body; jsonBody guarantees a plain JSON object (or `{}` when none was sent). */
export function bodyOf(ctx: { request: unknown }): Record<string, unknown> {
  return (ctx.request as { body?: Record<string, unknown> }).body ?? {};
}
