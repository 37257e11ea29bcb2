/**
 * A sign-in with a provider, from `start` to the callback: authorization code with PKCE (S256),
 * `state` and `nonce`, as openid-client makes and checks them.
 *
 * `start` opens a flow (flows.ts) and answers where to send the browser. The callback takes the
 * flow of its `state` once, trades the provider's code (with our verifier), and lets openid-client
 * check the ID token: its signature by the provider's keys, `iss`, `aud`, `nonce` and expiry. A
 * code the provider made for another client is refused by the provider itself at that trade. The
 * account is found or made by the rules of account-links.ts, and the browser goes back to the
 * flow's redirect with `#code=<login code>` (login-codes.ts), or `#error=<reason>`.
 */
import { type OIDC_CALLBACK_ERRORS, oidcMessages } from '@cs/contract';
import { HttpError } from '@cs/errors';
import type { Logger } from '@cs/log';
import {
  AuthorizationResponseError,
  authorizationCodeGrant,
  buildAuthorizationUrl,
  calculatePKCECodeChallenge,
  fetchUserInfo,
} from 'openid-client';
import type { AccountLinks, ProviderClaims } from './account-links';
import type { FlowStart, Flows } from './flows';
import type { LoginCodes } from './login-codes';
import type { Provider, ProviderDirectory } from './provider-directory';

type CallbackError = (typeof OIDC_CALLBACK_ERRORS)[number];

export interface SignInDeps {
  directory: ProviderDirectory;
  flows: Flows;
  codes: LoginCodes;
  links: AccountLinks;
  /** The gateway's public origin (PUBLIC_URL): the callback the providers allow is under it. */
  publicUrl: string;
  /** The origins a flow may end on: FRONTEND_ORIGIN's and WEB_URL's. */
  allowedOrigins: readonly string[];
  logger: Logger;
}

export function createSignIn({ directory, flows, codes, links, publicUrl, allowedOrigins, logger }: SignInDeps) {
  const origins = new Set(allowedOrigins.flatMap((url) => (URL.canParse(url) ? [new URL(url).origin] : [])));
  const callbackOf = (provider: string) => `${publicUrl}/api/auth/oidc/${provider}/callback`;

  const usable = (id: string): Provider => {
    if (!directory.isConfigured(id)) throw new HttpError(404, oidcMessages.unknownProvider);
    const provider = directory.usable(id);
    if (!provider) throw new HttpError(503, oidcMessages.providerUnavailable, { expose: true });
    return provider;
  };

  /** The redirect without a fragment (ours goes there), when it is a page of an allowed origin. */
  const allowedRedirect = (redirect: string) => {
    const url = URL.canParse(redirect) ? new URL(redirect) : undefined;
    if (!url || !['http:', 'https:'].includes(url.protocol) || !origins.has(url.origin)) {
      throw new HttpError(400, oidcMessages.redirectNotAllowed);
    }
    url.hash = '';
    return url.href;
  };

  /** What the provider says of the person: the ID token's claims, and its userinfo when the token has no address. */
  const claimsOf = async (provider: Provider, tokens: Awaited<ReturnType<typeof authorizationCodeGrant>>) => {
    const idToken = tokens.claims();
    if (!idToken) throw new Error('The provider answered no ID token');
    let { email, email_verified } = idToken;
    if (email === undefined && tokens.access_token) {
      ({ email, email_verified } = await fetchUserInfo(provider.client, tokens.access_token, idToken.sub));
    }
    return {
      provider: provider.settings.id,
      issuer: idToken.iss,
      subject: idToken.sub,
      email: typeof email === 'string' ? email : undefined,
      emailVerified: email_verified === true,
    } satisfies ProviderClaims;
  };

  return {
    /** Where to send the browser to sign in at the provider. */
    async start(id: string, start: Omit<FlowStart, 'provider'>): Promise<string> {
      const provider = usable(id);
      const redirect = allowedRedirect(start.redirect);
      const flow = await flows.open({ ...start, redirect, provider: id });
      return buildAuthorizationUrl(provider.client, {
        redirect_uri: callbackOf(id),
        scope: 'openid email profile',
        code_challenge: await calculatePKCECodeChallenge(flow.verifier),
        code_challenge_method: 'S256',
        state: flow._id,
        nonce: flow.nonce,
      }).href;
    },

    /** Where to send the browser back: the flow's redirect with `#code=` or `#error=`; 400 for a state of no flow. */
    async callback(id: string, query: string, state: string): Promise<string> {
      if (!directory.isConfigured(id)) throw new HttpError(404, oidcMessages.unknownProvider);
      const flow = await flows.take(state, id);
      const back = (fragment: string) => `${flow.redirect}#${fragment}`;
      const failed = (error: CallbackError) => back(`error=${error}`);
      const provider = directory.usable(id);
      if (!provider) return failed('provider_error');
      const current = new URL(callbackOf(id));
      current.search = query;
      let claims: ProviderClaims;
      try {
        const tokens = await authorizationCodeGrant(provider.client, current, {
          pkceCodeVerifier: flow.verifier,
          expectedNonce: flow.nonce,
          expectedState: flow._id,
          idTokenExpected: true,
        });
        claims = await claimsOf(provider, tokens);
      } catch (err) {
        // The person said no at the provider: the client may say so. Anything else is the provider's
        // answer failing a check (a code for another client, a token not for us): logged, not shown.
        if (err instanceof AuthorizationResponseError && err.error === 'access_denied') return failed('access_denied');
        logger.warn({ err, provider: id }, 'a sign-in with a provider failed');
        return failed('provider_error');
      }
      const outcome = await links.signIn(claims);
      if ('error' in outcome) return failed(outcome.error);
      return back(`code=${await codes.issue(flow._id, outcome.userId, flow.challenge)}`);
    },
  };
}

export type SignIn = ReturnType<typeof createSignIn>;
