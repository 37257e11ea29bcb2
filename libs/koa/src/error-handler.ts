import { HttpError, isHttpError, isUnavailable, messages } from '@cs/errors';
import type { Logger } from '@cs/log';
import type { AppMiddleware } from './context';

interface StatusError {
  status?: unknown;
  statusCode?: unknown;
  expose?: unknown;
  type?: unknown;
  name?: unknown;
}

/** Errors raised by libraries (body parsing, mongoose) that are the client's fault. */
function clientError(err: StatusError): HttpError | undefined {
  const status = typeof err.status === 'number' ? err.status : err.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 413) return new HttpError(413, messages.bodyTooLarge, { cause: err });
    if (err.type === 'entity.parse.failed' || err instanceof SyntaxError)
      return new HttpError(400, messages.malformedJson, { cause: err });
    if (status === 415) return new HttpError(415, messages.unsupportedMediaType, { cause: err });
    return new HttpError(status, err.expose === true ? String((err as Error).message) : 'Bad request', { cause: err });
  }
  // Backstops: our own validation runs first, so these mean a check was missed, not a crash.
  if (err.name === 'CastError') return new HttpError(400, messages.invalidId, { cause: err });
  if (err.name === 'ValidationError') return new HttpError(400, 'Invalid input', { cause: err });
  return undefined;
}

export function toHttpError(err: unknown): HttpError {
  if (isHttpError(err)) return err;
  if (isUnavailable(err)) return new HttpError(503, messages.unavailable, { cause: err });
  if (err !== null && typeof err === 'object') {
    const mapped = clientError(err as StatusError);
    if (mapped) return mapped;
  }
  return new HttpError(500, messages.internal, { cause: err });
}

/**
 * The one error middleware of an app: writes the contract's shapes, `{error}` or `{errors}`, and
 * `{error, errors}` for a contract's `{error}` answer to a body that broke several rules.
 * Only exposed messages reach the client; causes and stacks go to the log.
 */
export function errorHandler({ logger }: { logger: Logger }): AppMiddleware {
  return async function errorHandler(ctx, next) {
    try {
      await next();
    } catch (raw) {
      const err = toHttpError(raw);
      const requestId = ctx.state.requestId;
      if (err.status >= 500) {
        logger.error({ err: err.cause ?? err, requestId, status: err.status, path: ctx.path }, err.message);
      }
      ctx.status = err.status;
      for (const [name, value] of Object.entries(err.headers ?? {})) ctx.set(name, value);
      ctx.body = err.details
        ? { errors: err.details }
        : {
            error: err.expose ? err.message : err.status === 503 ? messages.unavailable : messages.internal,
            ...(err.expose && err.fields && { errors: err.fields }),
          };
    }
  };
}

/**
 * Gives a route the contract's operation-specific 500 message ("Registration failed", ...).
 * Expected errors and "unavailable" pass through untouched.
 */
export function failureMessage(message: string): AppMiddleware {
  return async function failureMessage(_ctx, next) {
    try {
      await next();
    } catch (err) {
      const mapped = toHttpError(err);
      if (mapped.status !== 500 || isHttpError(err)) throw mapped;
      throw new HttpError(500, message, { cause: err, expose: true });
    }
  };
}
