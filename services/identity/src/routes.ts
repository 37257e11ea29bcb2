import {
  changePasswordSchema,
  credentialsSchema,
  deleteAccountSchema,
  loginSchema,
  passwordResetConfirmSchema,
  passwordResetRequestSchema,
} from '@cs/contract';
import {
  type AppState,
  type Bulkhead,
  bodyOf,
  clientAddressOf,
  failureMessage,
  inBulkhead,
  requireAuth,
  validateBody,
} from '@cs/koa';
import Router from '@koa/router';
import type { Accounts } from './accounts';
import { messages, normalizeEmail, toCredentials } from './credentials';
import type { KnownClients } from './known-clients';
import type { PasswordResets } from './password-reset';

/** Every body is checked by its schema in @cs/contract before the handler: the handlers read strings. */
export function authRoutes(
  { accounts, resets }: { accounts: Accounts; resets: PasswordResets },
  { secret, bcrypt, known }: { secret: string; bcrypt: Bulkhead; known: KnownClients },
): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/auth' });
  const authenticated = requireAuth({ secret });
  // Every route that hashes or compares a password: after its body's checks, before any lookup.
  const hashing = inBulkhead(bcrypt, { priority: (ctx) => known.has(clientAddressOf(ctx)) });
  const strings = <K extends string>(ctx: { request: unknown }) => bodyOf(ctx) as Record<K, string>;

  router.post(
    '/register',
    validateBody(credentialsSchema),
    hashing,
    failureMessage(messages.registrationFailed),
    async (ctx) => {
      const token = await accounts.register(toCredentials(bodyOf(ctx)));
      known.loggedIn(clientAddressOf(ctx));
      ctx.status = 201;
      ctx.body = { token };
    },
  );

  router.post('/login', validateBody(loginSchema), hashing, failureMessage(messages.loginFailed), async (ctx) => {
    const token = await accounts.login(toCredentials(bodyOf(ctx)), clientAddressOf(ctx));
    known.loggedIn(clientAddressOf(ctx));
    ctx.body = { token };
  });

  router.put(
    '/password',
    authenticated,
    validateBody(changePasswordSchema),
    hashing,
    failureMessage(messages.passwordChangeFailed),
    async (ctx) => {
      const { currentPassword, newPassword } = strings<'currentPassword' | 'newPassword'>(ctx);
      const userId = ctx.state.userId as string;
      ctx.body = {
        token: await accounts.changePassword(userId, { currentPassword, newPassword }, clientAddressOf(ctx)),
      };
    },
  );

  router.delete(
    '/account',
    authenticated,
    validateBody(deleteAccountSchema),
    hashing,
    failureMessage(messages.accountDeletionFailed),
    async (ctx) => {
      const { password } = strings<'password'>(ctx);
      await accounts.deleteAccount(ctx.state.userId as string, password, clientAddressOf(ctx));
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
    hashing,
    failureMessage(messages.resetFailed),
    async (ctx) => {
      const { token, newPassword } = strings<'token' | 'newPassword'>(ctx);
      await resets.confirm(token, newPassword);
      ctx.status = 204;
    },
  );

  return router;
}
