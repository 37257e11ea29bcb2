import { type AppState, bodyOf, failureMessage } from '@cs/koa';
import Router from '@koa/router';
import type { Accounts } from './accounts';

/** The client's address, set by the gateway (which drops any a client sends: x-internal-*). */
export const CLIENT_ADDRESS_HEADER = 'x-internal-client-address';

import { messages, readCredentials } from './credentials';

export function authRoutes(accounts: Accounts): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/auth' });

  router.post('/register', failureMessage(messages.registrationFailed), async (ctx) => {
    const token = await accounts.register(readCredentials(bodyOf(ctx)));
    ctx.status = 201;
    ctx.body = { token };
  });

  router.post('/login', failureMessage(messages.loginFailed), async (ctx) => {
    const token = await accounts.login(readCredentials(bodyOf(ctx)), ctx.get(CLIENT_ADDRESS_HEADER) || 'unknown');
    ctx.body = { token };
  });

  return router;
}
