/** The operations of sign-in with OpenID Connect providers (tag `auth`), and their schemas. */
import * as s from '../schemas/oidc';
import { operation } from './operation';
import { ref, response } from './responses';

/** A session's answer, in the body or (cookie mode) with the refresh token in a cookie. */
const SESSION = { oneOf: [ref('SessionTokens'), ref('CookieSessionTokens')] };

const providerParameter = {
  name: 'provider',
  in: 'path',
  required: true,
  description: 'A provider’s `id` from `GET /api/auth/providers`; any other is 404.',
  schema: s.oidcProviderParamSchema,
  example: 'dev',
};

/**
 * Why an operation is not a step of the examples' sequence (examples.ts TRY_IT): it needs a browser
 * that has signed in at a provider, which "Try it out" cannot be.
 */
const NOT_TRIED = {
  'x-try-it':
    'Not in the sequence of the introduction: it needs a browser signed in at an OpenID Connect provider (start, the provider’s page, the callback, then exchange).',
};

const LOCATION = {
  Location: { description: 'Where the browser goes next.', schema: { type: 'string', format: 'uri' } },
};

/** A navigation's operation: the `{provider}` in its path, and its redirect as its answer. */
function navigation(spec: Parameters<typeof operation>[0], redirect: { status: number; description: string }) {
  const built = operation(spec);
  const { [spec.ok.status]: _ok, ...failures } = built.responses;
  return {
    ...built,
    ...NOT_TRIED,
    parameters: [providerParameter, ...(built.parameters ?? [])],
    responses: { [redirect.status]: response(redirect.description, undefined, LOCATION), ...failures },
  };
}

export const oidcSchemas = {
  OidcProviderList: s.oidcProviderListSchema,
  OidcExchange: s.oidcExchangeSchema,
  LinkedIdentity: s.linkedIdentitySchema,
  LinkedIdentityList: s.linkedIdentityListSchema,
};

export const oidcPaths = {
  '/api/auth/providers': {
    get: operation({
      id: 'listProviders',
      summary: 'List the providers one may sign in with',
      description:
        'The providers configured (OIDC_PROVIDERS) whose discovery answered: a provider that cannot be reached is left out until it answers. Each with the `id` of its paths and the `name` of its button.',
      tag: 'auth',
      auth: 'none',
      ok: { status: 200, description: 'The usable providers.', schema: ref('OidcProviderList') },
    }),
  },
  '/api/auth/oidc/{provider}/start': {
    get: navigation(
      {
        id: 'startOidcSignIn',
        summary: 'Start a sign-in with a provider (a navigation)',
        description:
          'Open in the browser, as a full page (never a popup): redirects to the provider, with authorization code, PKCE (S256), `state` and `nonce`. `challenge` is the base64url SHA-256 of a random verifier the client keeps, for `exchange`; it binds the sign-in to the client that started it. `redirect` must be on FRONTEND_ORIGIN or WEB_URL (400 otherwise). 404 for an unknown provider, 503 for one that cannot be reached, 429 past the open sign-ins one address (20) or everyone may have. A sign-in must end within 10 minutes.',
        tag: 'auth',
        auth: 'none',
        query: [
          {
            name: 'challenge',
            description: s.oidcStartQuerySchema.properties.challenge.description,
            required: true,
            // The challenge of the verifier `dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk` (RFC 7636, appendix B).
            example: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          },
          {
            name: 'redirect',
            description: s.oidcStartQuerySchema.properties.redirect.description,
            required: true,
            example: 'http://localhost:3000/',
          },
        ],
        ok: { status: 302, description: 'To the provider.' },
        errors: ['BadRequest', 'NotFound'],
      },
      { status: 302, description: 'To the provider’s sign-in page.' },
    ),
  },
  '/api/auth/oidc/{provider}/callback': {
    get: navigation(
      {
        id: 'oidcCallback',
        summary: 'Where the provider sends the browser back (a navigation)',
        description: `The provider's redirect URI: \`<PUBLIC_URL>/api/auth/oidc/{provider}/callback\`. Takes the sign-in of \`state\` once, trades the provider's code, checks the ID token (signature, iss, aud, nonce, expiry), finds or makes the account, and answers 303 to the sign-in's \`redirect\` with \`#code=<login code>\` or \`#error=<reason>\`, one of ${s.OIDC_CALLBACK_ERRORS.join(', ')}. An unknown, expired or already completed \`state\` has nowhere to go back to: 400.`,
        tag: 'auth',
        auth: 'none',
        query: [
          {
            name: 'state',
            description: 'The sign-in’s state, as the provider sends it back.',
            required: true,
            example: 'the state the provider sends back',
          },
          { name: 'code', description: 'The provider’s authorization code.' },
        ],
        ok: { status: 303, description: 'Back to the client.' },
        errors: ['BadRequest', 'NotFound'],
      },
      { status: 303, description: 'To the sign-in’s redirect, with `#code=` or `#error=`.' },
    ),
  },
  '/api/auth/oidc/exchange': {
    post: {
      ...NOT_TRIED,
      ...operation({
        id: 'exchangeOidcCode',
        summary: 'Trade a sign-in’s login code for a session',
        description:
          'The login code of the callback’s `#code=`, with the verifier whose challenge started the sign-in: answers as login does. The code is single-use and valid 60 s; a used, expired or unknown code, or a wrong verifier (which uses the code up), is 400.',
        tag: 'auth',
        refreshCookie: true,
        auth: 'none',
        body: ref('OidcExchange'),
        example: { code: 'the code of #code=', verifier: 'the verifier whose challenge started the sign-in' },
        ok: { status: 200, description: 'Signed in: a new session.', schema: SESSION },
      }),
    },
  },
  '/api/auth/identities': {
    get: operation({
      id: 'listIdentities',
      summary: 'List the providers linked to the caller’s account',
      tag: 'auth',
      auth: 'required',
      ok: { status: 200, description: 'The linked identities, oldest first.', schema: ref('LinkedIdentityList') },
    }),
  },
  '/api/auth/identities/{id}': {
    delete: {
      ...NOT_TRIED,
      ...operation({
        id: 'unlinkIdentity',
        summary: 'Unlink a provider from the caller’s account',
        description:
          '409 when it is the account’s last way to log in: no password and no other linked provider (a password reset sets one).',
        tag: 'auth',
        auth: 'required',
        pathId: { description: 'The `_id` of a linked identity.', example: '64b7f0c2a1b2c3d4e5f60718' },
        ok: { status: 204, description: 'Unlinked.' },
        errors: ['Conflict'],
      }),
    },
  },
};
