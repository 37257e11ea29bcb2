import { HttpError, messages } from '@cs/errors';
import type { RouterParameterMiddleware } from '@koa/router';
import type { AppState } from './context';

/** A record identifier as the database writes it: 24 hex digits, nothing else. */
export const OBJECT_ID = /^[0-9a-f]{24}$/i;

export function isObjectId(value: unknown): value is string {
  return typeof value === 'string' && OBJECT_ID.test(value);
}

/** For `router.param('id', idGuard())`: a malformed id is 400 before any query runs. */
export function idGuard(): RouterParameterMiddleware<AppState> {
  return async function idGuard(id, _ctx, next) {
    if (!isObjectId(id)) throw new HttpError(400, messages.invalidId);
    await next();
  };
}
