/**
 * The routes of sign-in with OpenID Connect providers, under /api/auth. `start` and `callback` are
 * navigations of the browser: they answer redirects, and their failures that have nowhere to go
 * back to answer `{error}`. The path parameter is `{provider}`, not `{id}`: the auth routers guard
 * `:id` as an object id. A name no provider has is 404 before anything else is read.
 */
import type { TokenVerifier } from '@cs/auth';
import {
  objectIdParamSchema,
  oidcCallbackQuerySchema,
  oidcExchangeSchema,
  oidcMessages,
  oidcProviderParamSchema,
  oidcStartQuerySchema,
} from '@cs/contract';
import { HttpError } from '@cs/errors';
import {
  type AppContext,
  type AppState,
  bodyOf,
  clientAddressOf,
  failureMessage,
  requireAuth,
  validateBody,
  validateParam,
  validateQuery,
} from '@cs/koa';
import Router from '@koa/router';
import type { RefreshCookies } from '../sessions/refresh-cookie';
import type { AccountAccess } from './account-access';
import type { ProviderDirectory } from './provider-directory';
import type { SignIn } from './sign-in';

export function oidcRoutes(
  { directory, signIn, access }: { directory: ProviderDirectory; signIn: SignIn; access: AccountAccess },
  { tokens, cookies }: { tokens: TokenVerifier; cookies: RefreshCookies },
): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/auth' });
  const authenticated = requireAuth(tokens);
  router.param('provider', validateParam(oidcProviderParamSchema));
  router.param('provider', async (provider, _ctx, next) => {
    if (!directory.isConfigured(provider)) throw new HttpError(404, oidcMessages.unknownProvider);
    await next();
  });
  router.param('id', validateParam(objectIdParamSchema));
  // After their schema, the parameters read are single strings.
  const query = <K extends string>(ctx: { query: unknown }) => ctx.query as Record<K, string>;

  router.get('/providers', failureMessage(oidcMessages.providersFailed), (ctx) => {
    ctx.body = directory.list();
  });

  router.get(
    '/oidc/:provider/start',
    validateQuery(oidcStartQuerySchema),
    failureMessage(oidcMessages.signInFailed),
    async (ctx) => {
      const { challenge, redirect } = query<'challenge' | 'redirect'>(ctx);
      const at = await signIn.start(ctx.params.provider as string, {
        challenge,
        redirect,
        client: clientAddressOf(ctx),
      });
      navigate(ctx, 302, at);
    },
  );

  router.get(
    '/oidc/:provider/callback',
    validateQuery(oidcCallbackQuerySchema),
    failureMessage(oidcMessages.signInFailed),
    async (ctx) => {
      const back = await signIn.callback(ctx.params.provider as string, ctx.querystring, query<'state'>(ctx).state);
      navigate(ctx, 303, back);
    },
  );

  // Cookie mode's checks first, as on every route that answers a session (refresh-cookie.ts).
  router.post(
    '/oidc/exchange',
    cookies.checks(),
    validateBody(oidcExchangeSchema),
    failureMessage(oidcMessages.signInFailed),
    async (ctx) => {
      const { code, verifier } = bodyOf(ctx) as { code: string; verifier: string };
      cookies.answer(ctx, await access.exchange(code, verifier, ctx.get('user-agent') || undefined));
    },
  );

  router.get('/identities', authenticated, failureMessage(oidcMessages.identitiesFailed), async (ctx) => {
    ctx.body = await access.list(ctx.state.userId as string);
  });

  router.delete('/identities/:id', authenticated, failureMessage(oidcMessages.identitiesFailed), async (ctx) => {
    await access.unlink(ctx.state.userId as string, ctx.params.id as string);
    ctx.status = 204;
  });

  return router;
}

/**
 * A redirect with no body: Koa's "Redirecting to…" is for no one, and the document declares none.
 * Never cached, and the page it leads to is not told this URL (its query holds a state, or the
 * provider's code).
 */
function navigate(ctx: AppContext, status: 302 | 303, location: string): void {
  ctx.status = status;
  ctx.set('Location', location);
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.body = '';
}
