import type { TokenVerifier } from '@cs/auth';
import { HttpError, messages } from '@cs/errors';
import { accessLogger, type Logger, requestIdFrom } from '@cs/log';
import { context } from '@opentelemetry/api';
import type { NextFunction, Request, Response } from 'express';
import { refuseBodyTooLarge } from './body-too-large';
import { sendError } from './respond';
import type { AuthRule } from './route-table';

/** Keeps or makes `x-request-id`, forwards it upstream and returns it to the client. */
export function requestId() {
  return function requestId(req: Request, res: Response, next: NextFunction) {
    const id = requestIdFrom(req.headers['x-request-id']);
    req.headers['x-request-id'] = id;
    res.setHeader('x-request-id', id);
    next();
  };
}

/**
 * One line a request, once answered, or once its connection closed before the whole answer was
 * sent (`closedEarly`: the client gave up or went away, a stream ended by its reader; `status` only
 * if the answer had begun). Its fields are fixed and none is a credential (the request id is the
 * one we checked or made): it is written without the redaction pass (`accessLogger`), so a field
 * added here must not be one either.
 */
export function accessLog(gateway: Logger) {
  const logger = accessLogger(gateway);
  return function accessLog(req: Request, res: Response, next: NextFunction) {
    if (!logger.isLevelEnabled('info')) return next();
    const started = process.hrtime.bigint();
    // In the request's trace (the line carries its id): 'close' itself comes from the socket.
    // Emitted once per response, after 'finish' when it was all sent; `on` spares the wrapper `once` makes.
    res.on(
      'close',
      context.bind(context.active(), () => {
        const finished = res.writableFinished;
        logger.info({
          requestId: req.headers['x-request-id'],
          method: req.method,
          path: req.path,
          ...(finished || res.headersSent ? { status: res.statusCode } : {}),
          ms: Number(process.hrtime.bigint() - started) / 1e6,
          ...(finished ? {} : { closedEarly: true }),
        });
      }),
    );
    next();
  };
}

/**
 * Headers only our own hops may set. A client sending them is ignored: services learn who the
 * caller is from the token alone.
 */
const INTERNAL = /^(x-user-|x-internal-|x-forwarded-user|x-authenticated-)/;

export function dropInternalHeaders() {
  return function dropInternalHeaders(req: Request, _res: Response, next: NextFunction) {
    for (const name of Object.keys(req.headers)) if (INTERNAL.test(name)) delete req.headers[name];
    next();
  };
}

/** Refuses a declared body over the limit before a byte is forwarded; services also count bytes. */
export function bodyLimit(maxBytes: number) {
  return function bodyLimit(req: Request, res: Response, next: NextFunction) {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > maxBytes) return refuseBodyTooLarge(req, res);
    next();
  };
}

/**
 * Verifies the token before the hop, with the services' exact rules and messages (a revoked token
 * included), so a bad request is answered here; for logout (`signed`), only that the token is ours.
 * The header is forwarded untouched: each service verifies it again.
 */
export async function authGuard(rule: AuthRule, tokens: TokenVerifier, req: Request, res: Response): Promise<boolean> {
  if (rule === 'none' || (rule !== 'required' && req.headers.authorization === undefined)) return true;
  try {
    if (rule === 'signed') tokens.signedToken(req.headers.authorization);
    else await tokens.userIdFromAuthorization(req.headers.authorization);
    return true;
  } catch (err) {
    const e = err instanceof HttpError ? err : new HttpError(401, messages.invalidToken);
    sendError(res, e.status, e.message, e.headers);
    return false;
  }
}
