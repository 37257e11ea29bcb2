import type { TokenVerifier } from '@cs/auth';
import {
  changePasswordSchema,
  credentialsSchema,
  deleteAccountSchema,
  loginSchema,
  logoutBodySchema,
  objectIdParamSchema,
  passwordResetConfirmSchema,
  passwordResetRequestSchema,
  refreshTokenBodySchema,
  updateMeSchema,
} from '@cs/contract';
import { HttpError } from '@cs/errors';
import {
  type AppState,
  type Bulkhead,
  bodyOf,
  failureMessage,
  requireAuth,
  validateBody,
  validateParam,
} from '@cs/koa';
import Router from '@koa/router';
import type { Accounts } from './accounts/accounts';
import { messages, normalizeEmail, toCredentials } from './accounts/credentials';
import { type Profiles, toDisplayName, toUserIds } from './accounts/profiles';
import type { KnownClients } from './login-defence/known-clients';
import type { PasswordResets } from './password-reset/password-reset';
import { proofOf, requestClients } from './request-client';
import type { RefreshCookies } from './sessions/refresh-cookie';
import { type Sessions, sessionMessages } from './sessions/sessions';

/** Every body is checked by its schema in @cs/contract before the handler: the handlers read strings. */
export function authRoutes(
  {
    accounts,
    resets,
    sessions,
    profiles,
  }: { accounts: Accounts; resets: PasswordResets; sessions: Sessions; profiles: Profiles },
  {
    tokens,
    bcrypt,
    known,
    cookies,
  }: { tokens: TokenVerifier; bcrypt: Bulkhead; known: KnownClients; cookies: RefreshCookies },
): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/auth' });
  const authenticated = requireAuth(tokens);
  const strings = <K extends string>(ctx: { request: unknown }) => bodyOf(ctx) as Record<K, string>;
  const clientOf = requestClients({ bcrypt, known });
  // Cookie mode's checks come before any route's work (refresh-cookie.ts).
  router.use(cookies.checks());
  router.param('id', validateParam(objectIdParamSchema));

  router.post(
    '/register',
    validateBody(credentialsSchema),
    failureMessage(messages.registrationFailed),
    async (ctx) => {
      const body = bodyOf(ctx);
      const credentials = toCredentials(body);
      cookies.answer(ctx, await accounts.register(credentials, clientOf(ctx), toDisplayName(body.displayName)));
      known.loggedIn(ctx, credentials.email);
      ctx.status = 201;
    },
  );

  router.post('/login', validateBody(loginSchema), failureMessage(messages.loginFailed), async (ctx) => {
    const credentials = toCredentials(bodyOf(ctx));
    const client = { ...clientOf(ctx), device: known.deviceOf(ctx, credentials.email) };
    cookies.answer(ctx, await accounts.login(credentials, client));
    known.loggedIn(ctx, credentials.email);
  });

  const noCookie = () => new HttpError(401, sessionMessages.invalidRefreshToken);
  router.post(
    '/refresh',
    cookies.fromCookie(noCookie),
    validateBody(refreshTokenBodySchema),
    failureMessage(messages.refreshFailed),
    async (ctx) => {
      cookies.answer(ctx, await sessions.refresh(strings<'refreshToken'>(ctx).refreshToken));
    },
  );

  router.post(
    '/logout',
    cookies.fromCookie(),
    validateBody(logoutBodySchema),
    failureMessage(messages.logoutFailed),
    async (ctx) => {
      // A Bearer token sent along stops working too. One we signed and revoked already, or expired,
      // changes nothing (204); any other is 401, as at the gateway.
      const header = ctx.headers.authorization;
      const bearer = header === undefined ? undefined : tokens.signedToken(header);
      await sessions.endByToken((bodyOf(ctx) as { refreshToken?: string }).refreshToken, bearer);
      cookies.clear(ctx);
      ctx.status = 204;
    },
  );

  router.get('/sessions', authenticated, failureMessage(messages.sessionsFailed), async (ctx) => {
    // Which one is the caller's: its cookie's refresh token, or its access token (verified above).
    const { issuedAt } = tokens.signedToken(ctx.headers.authorization);
    ctx.body = await sessions.list(ctx.state.userId as string, { refreshToken: cookies.presented(ctx), issuedAt });
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

  router.patch('/me', authenticated, validateBody(updateMeSchema), failureMessage(messages.meFailed), async (ctx) => {
    const userId = ctx.state.userId as string;
    await profiles.rename(userId, toDisplayName(bodyOf(ctx).displayName));
    ctx.body = await accounts.me(userId);
  });

  router.put(
    '/password',
    authenticated,
    validateBody(changePasswordSchema),
    failureMessage(messages.passwordChangeFailed),
    async (ctx) => {
      const { currentPassword, newPassword } = strings<'currentPassword' | 'newPassword'>(ctx);
      const userId = ctx.state.userId as string;
      const proof = proofOf(tokens, ctx, currentPassword);
      cookies.answer(ctx, await accounts.changePassword(userId, { proof, newPassword }, clientOf(ctx)));
    },
  );

  router.delete(
    '/account',
    authenticated,
    validateBody(deleteAccountSchema),
    failureMessage(messages.accountDeletionFailed),
    async (ctx) => {
      const { password } = strings<'password'>(ctx);
      await accounts.deleteAccount(ctx.state.userId as string, proofOf(tokens, ctx, password), clientOf(ctx));
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

/**
 * `GET /api/users?ids=a,b` (public): the display names of up to 50 accounts, for a page of posts
 * to say who wrote them in one request. Unknown ids are left out; no address is ever part of it.
 */
export function userRoutes(profiles: Profiles): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/users' });
  router.get('/', failureMessage(messages.usersFailed), async (ctx) => {
    ctx.body = await profiles.named(toUserIds(ctx.query.ids));
  });
  return router;
}
