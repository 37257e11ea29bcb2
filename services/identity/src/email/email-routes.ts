/**
 * `POST /api/auth/email-verification` (logged in), `/email-verification/confirm`, `/email-change`
 * (logged in) and `/email-change/confirm`; and `GET /internal/email-verified`, which the gateway
 * asks when REQUIRE_VERIFIED_EMAIL is on. The confirmations need no login: the link may be opened
 * on another device. None of them is a GET: opening a link uses nothing up.
 */
import type { TokenVerifier } from '@cs/auth';
import { emailChangeSchema, emailTokenSchema } from '@cs/contract';
import {
  type AppContext,
  type AppState,
  type Bulkhead,
  bodyOf,
  failureMessage,
  noBody,
  optionalAuth,
  requireAuth,
  requireInternalCaller,
  validateBody,
} from '@cs/koa';
import Router from '@koa/router';
import { normalizeEmail } from '../accounts/credentials';
import type { KnownClients } from '../login-defence/known-clients';
import { proofOf, requestClients } from '../request-client';
import type { Caller, EmailChanges } from './email-change';
import type { EmailVerifications } from './email-verification';
import { emailMessages } from './messages';

export function emailRoutes(
  { verifications, changes }: { verifications: EmailVerifications; changes: EmailChanges },
  { tokens, bcrypt, known }: { tokens: TokenVerifier; bcrypt: Bulkhead; known: KnownClients },
): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/auth' });
  const authenticated = requireAuth(tokens);
  const clientOf = requestClients({ bcrypt, known });
  const tokenOf = (ctx: AppContext) => (bodyOf(ctx) as { token: string }).token;

  /** The confirming request's caller, when it sent a token (checked by optionalAuth, as at the gateway). */
  const callerOf = (ctx: AppContext): Caller | undefined => {
    const userId = ctx.state.userId as string | undefined;
    if (userId === undefined) return undefined;
    return { userId, issuedAt: tokens.signedToken(ctx.headers.authorization).issuedAt };
  };

  router.post(
    '/email-verification',
    authenticated,
    noBody(),
    failureMessage(emailMessages.verificationFailed),
    async (ctx) => {
      await verifications.request(ctx.state.userId as string);
      ctx.status = 202;
      ctx.body = { message: emailMessages.verificationSent };
    },
  );

  router.post(
    '/email-verification/confirm',
    validateBody(emailTokenSchema),
    failureMessage(emailMessages.verificationFailed),
    async (ctx) => {
      ctx.body = await verifications.confirm(tokenOf(ctx));
    },
  );

  router.post(
    '/email-change',
    authenticated,
    validateBody(emailChangeSchema),
    failureMessage(emailMessages.changeFailed),
    async (ctx) => {
      const { newEmail, password } = bodyOf(ctx) as { newEmail: string; password: string };
      const change = { newEmail: normalizeEmail(newEmail), proof: proofOf(tokens, ctx, password) };
      await changes.request(ctx.state.userId as string, change, clientOf(ctx));
      ctx.status = 202;
      ctx.body = { message: emailMessages.accepted };
    },
  );

  router.post(
    '/email-change/confirm',
    optionalAuth(tokens),
    validateBody(emailTokenSchema),
    failureMessage(emailMessages.changeFailed),
    async (ctx) => {
      ctx.body = await changes.confirm(tokenOf(ctx), callerOf(ctx));
    },
  );

  return router;
}

/**
 * `GET /internal/email-verified` → `{emailVerified}` for the user of the token the gateway signed
 * for its caller (requireInternalCaller). The gateway never routes `/internal`.
 */
export function emailVerifiedRoute(verifications: EmailVerifications, secret: string): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/internal/email-verified', requireInternalCaller({ secret }), async (ctx) => {
    ctx.body = { emailVerified: await verifications.isVerified(ctx.state.userId as string) };
  });
  return router;
}
