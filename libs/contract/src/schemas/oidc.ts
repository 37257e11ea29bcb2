/**
 * Sign-in with OpenID Connect providers: what its routes take and answer, and what their failures
 * say. The flow: `start` (a navigation) sends the browser to the provider, the provider sends it
 * back to `callback`, which sends it on to the client's `redirect` with `#code=` (or `#error=`),
 * and the client trades that code, with the verifier whose challenge started the flow, at
 * `exchange`, for the same answer as a login.
 */
import { noNul, objectId, timestamp } from './common';

/** A provider's name: the one in OIDC_PROVIDERS and in the paths. */
export const OIDC_PROVIDER_PATTERN = '^[a-z0-9]{1,20}$';
/** The base64url SHA-256 of the client's verifier (RFC 7636's S256): 43 characters. */
export const OIDC_CHALLENGE_PATTERN = '^[A-Za-z0-9_-]{43}$';
/** RFC 7636's code_verifier: 43 to 128 unreserved characters. */
export const OIDC_VERIFIER_PATTERN = '^[A-Za-z0-9._~-]{43,128}$';
/** The longest `redirect` a flow keeps. */
export const OIDC_REDIRECT_MAX = 2000;

/** The reasons a callback may give the client in `#error=`. */
export const OIDC_CALLBACK_ERRORS = ['access_denied', 'provider_error', 'email_missing', 'email_in_use'] as const;

export const oidcMessages = {
  unknownProvider: 'There is no sign-in provider by that name.',
  providerUnavailable: 'This sign-in provider cannot be reached right now. Try again in a moment.',
  challengeRequired:
    'challenge is required: the base64url SHA-256 of a random verifier of 43 to 128 characters that the client keeps.',
  redirectRequired: 'redirect is required: the page of the web client to come back to.',
  redirectNotAllowed:
    'redirect must be a page of the web client: its origin is not one this service sends people back to.',
  tooManyFlows: 'Too many sign-ins are under way from this address. Finish one, or wait a few minutes.',
  unknownState: 'This sign-in is unknown, has expired or was completed already. Start it again.',
  exchangeRequired: 'code and verifier are required',
  exchangeNotStrings: 'code and verifier must be strings',
  invalidCode: 'This sign-in code is not valid: it was used already, has expired, or never existed.',
  wrongVerifier: 'This sign-in code was not started by this client: the verifier does not match its challenge.',
  lastWayToLogIn:
    'This is the last way to log in to the account: set a password, or link another provider, before unlinking it.',
  identityNotFound: 'Not found',
  accountChanged: 'The account changed during the sign-in. Try again.',
  providersFailed: 'Failed to list the sign-in providers',
  signInFailed: 'Failed to sign in with the provider',
  identitiesFailed: 'Failed to read the linked sign-in providers',
} as const;

// ---------- requests ----------

/** `{provider}`: any other name is the same 404 as an unknown one. */
export const oidcProviderParamSchema = {
  type: 'string',
  pattern: OIDC_PROVIDER_PATTERN,
  'x-error': { status: 404 },
  'x-messages': oidcMessages.unknownProvider,
} as const;

/** `GET /api/auth/oidc/{provider}/start?redirect=&challenge=`. */
export const oidcStartQuerySchema = {
  type: 'object',
  required: ['challenge', 'redirect'],
  properties: {
    challenge: {
      type: 'string',
      pattern: OIDC_CHALLENGE_PATTERN,
      description: 'The base64url SHA-256 of a random verifier the client keeps (PKCE S256), 43 characters.',
      'x-messages': oidcMessages.challengeRequired,
    },
    redirect: {
      type: 'string',
      minLength: 1,
      maxLength: OIDC_REDIRECT_MAX,
      description:
        'Where the browser is sent at the end, with `#code=` or `#error=`: a page on FRONTEND_ORIGIN or WEB_URL.',
      'x-messages': oidcMessages.redirectRequired,
    },
  },
  'x-error': { status: 400 },
} as const;

/** `GET /api/auth/oidc/{provider}/callback`: what the provider sends back (its other parameters are read as they come). */
export const oidcCallbackQuerySchema = {
  type: 'object',
  required: ['state'],
  properties: {
    state: { type: 'string', minLength: 1, maxLength: 100, 'x-messages': oidcMessages.unknownState },
  },
  'x-error': { status: 400 },
} as const;

/** `POST /api/auth/oidc/exchange`. */
export const oidcExchangeSchema = {
  type: 'object',
  required: ['code', 'verifier'],
  properties: {
    code: noNul('code', {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      description: 'The login code of the callback’s `#code=`: single use, valid 60 s.',
      'x-messages': { minLength: oidcMessages.invalidCode, maxLength: oidcMessages.invalidCode },
    }),
    verifier: noNul('verifier', {
      type: 'string',
      pattern: OIDC_VERIFIER_PATTERN,
      description: 'The verifier whose challenge started the flow.',
      'x-messages': { pattern: oidcMessages.wrongVerifier },
    }),
  },
  'x-error': { status: 400 },
  'x-messages': { required: oidcMessages.exchangeRequired, type: oidcMessages.exchangeNotStrings },
} as const;

// ---------- answers ----------

export const oidcProviderListSchema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['id', 'name'],
    properties: {
      id: { type: 'string', pattern: OIDC_PROVIDER_PATTERN, description: 'The `{provider}` of the paths.' },
      name: { type: 'string', description: 'What a sign-in button says.' },
    },
    additionalProperties: false,
  },
} as const;

/** One provider identity linked to the caller's account. */
export const linkedIdentitySchema = {
  type: 'object',
  required: ['_id', 'provider', 'email', 'createdAt'],
  properties: {
    _id: { ...objectId, description: 'The `{id}` that unlinks it.' },
    provider: { type: 'string', pattern: OIDC_PROVIDER_PATTERN },
    email: { type: ['string', 'null'], description: 'The address the provider gave when it was linked, if any.' },
    createdAt: timestamp,
  },
  additionalProperties: false,
} as const;

export const linkedIdentityListSchema = { type: 'array', items: linkedIdentitySchema } as const;
