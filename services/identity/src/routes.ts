import type { TokenVerifier } from '@cs/auth';
import {
  changePasswordSchema,
  credentialsSchema,
  deleteAccountSchema,
  loginSchema,
  objectIdParamSchema,
  passwordResetConfirmSchema,
  passwordResetRequestSchema,
  refreshTokenBodySchema,
} from '@cs/contract';
import {
  type AppContext,
  type AppState,
  type Bulkhead,
  bodyOf,
  clientAddressOf,
  failureMessage,
  requireAuth,
  validateBody,
  validateParam,
} from '@cs/koa';
import Router from '@koa/router';
import type { Accounts, Client } from './accounts';
import { messages, normalizeEmail, toCredentials } from './credentials';
import type { KnownClients } from './known-clients';
import type { PasswordResets } from './password-reset';
import type { Sessions } from './sessions';

/** Every body is checked by its schema in @cs/contract before the handler: the handlers read strings. */
export function authRoutes(
  { accounts, resets, sessions }: { accounts: Accounts; resets: PasswordResets; sessions: Sessions },
  { tokens, bcrypt, known }: { tokens: TokenVerifier; bcrypt: Bulkhead; known: KnownClients },
): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/auth' });
  const authenticated = requireAuth(tokens);
  const strings = <K extends string>(ctx: { request: unknown }) => bodyOf(ctx) as Record<K, string>;
  const clientOf = (ctx: AppContext): Client => {
    const address = clientAddressOf(ctx);
    return {
      address,
      userAgent: ctx.get('user-agent') || undefined,
      // Every route that hashes or compares a password runs that work, and the lookups before it,
      // in its client's turn: after its body's checks, before any lookup, and not the writes after.
      passwordTurn: (work) => bcrypt.run(address, work, { priority: known.has(address) }),
    };
  };
  router.param('id', validateParam(objectIdParamSchema));

  router.post(
    '/register',
    validateBody(credentialsSchema),
    failureMessage(messages.registrationFailed),
    async (ctx) => {
      ctx.body = await accounts.register(toCredentials(bodyOf(ctx)), clientOf(ctx));
      known.loggedIn(clientAddressOf(ctx));
      ctx.status = 201;
    },
  );

  router.post('/login', validateBody(loginSchema), failureMessage(messages.loginFailed), async (ctx) => {
    ctx.body = await accounts.login(toCredentials(bodyOf(ctx)), clientOf(ctx));
    known.loggedIn(clientAddressOf(ctx));
  });

  router.post('/refresh', validateBody(refreshTokenBodySchema), failureMessage(messages.refreshFailed), async (ctx) => {
    ctx.body = await sessions.refresh(strings<'refreshToken'>(ctx).refreshToken);
  });

  router.post('/logout', validateBody(refreshTokenBodySchema), failureMessage(messages.logoutFailed), async (ctx) => {
    // A Bearer token sent along stops working too; a missing or wrong one changes nothing here.
    const bearer = ctx.headers.authorization?.startsWith('Bearer ') ? ctx.headers.authorization.slice(7) : undefined;
    await sessions.endByToken(strings<'refreshToken'>(ctx).refreshToken, bearer);
    ctx.status = 204;
  });

  router.get('/sessions', authenticated, failureMessage(messages.sessionsFailed), async (ctx) => {
    ctx.body = await sessions.list(ctx.state.userId as string);
  });

  router.delete('/sessions', authenticated, failureMessage(messages.sessionsFailed), async (ctx) => {
    await sessions.endAll(ctx.state.userId as string);
    ctx.status = 204;
  });

  router.delete('/sessions/:id', authenticated, failureMessage(messages.sessionsFailed), async (ctx) => {
    await sessions.end(ctx.state.userId as string, ctx.params.id as string);
    ctx.status = 204;
  });

  router.get('/me', authenticated, failureMessage(messages.meFailed), async (ctx) => {
    ctx.body = await accounts.me(ctx.state.userId as string);
  });

  router.put(
    '/password',
    authenticated,
    validateBody(changePasswordSchema),
    failureMessage(messages.passwordChangeFailed),
    async (ctx) => {
      const { currentPassword, newPassword } = strings<'currentPassword' | 'newPassword'>(ctx);
      const userId = ctx.state.userId as string;
      ctx.body = await accounts.changePassword(userId, { currentPassword, newPassword }, clientOf(ctx));
    },
  );

  router.delete(
    '/account',
    authenticated,
    validateBody(deleteAccountSchema),
    failureMessage(messages.accountDeletionFailed),
    async (ctx) => {
      const { password } = strings<'password'>(ctx);
      await accounts.deleteAccount(ctx.state.userId as string, password, clientOf(ctx));
      ctx.status = 204;
    },
  );

  router.post(
    '/password-reset',
    validateBody(passwordResetRequestSchema),
    failureMessage(messages.resetFailed),
    async (ctx) => {
      await resets.request(normalizeEmail(strings<'email'>(ctx).email));
      ctx.status = 202;
      ctx.body = { message: messages.resetAccepted };
    },
  );

  router.post(
    '/password-reset/confirm',
    validateBody(passwordResetConfirmSchema),
    failureMessage(messages.resetFailed),
    async (ctx) => {
      const { token, newPassword } = strings<'token' | 'newPassword'>(ctx);
      await resets.confirm(token, newPassword, clientOf(ctx).passwordTurn);
      ctx.status = 204;
    },
  );

  return router;
}
