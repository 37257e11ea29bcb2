import { HttpError } from '@cs/errors';
import type { AppState } from '@cs/koa';
import Router from '@koa/router';
import type { RevocationLog } from './revocation-log';

const SEQ = /^(?:0|[1-9][0-9]{0,15})$/;

/**
 * `GET /internal/revocations?after=<seq>`: the log's entries after `seq`, for the gateway and the
 * services to follow (@cs/auth's revocation feed). The gateway never routes `/internal`; the
 * entries hold user ids and digests of tokens, never a token.
 */
export function revocationRoutes(log: RevocationLog): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/internal/revocations', async (ctx) => {
    const after = ctx.query.after ?? '0';
    if (typeof after !== 'string' || !SEQ.test(after)) throw new HttpError(400, 'after must be a whole number');
    ctx.body = await log.after(Number(after));
  });
  return router;
}
