/** Accounts and sessions: what register, login, refresh, logout and the account's routes take and answer. */
import { DISPLAY_NAME_PATTERN, EMAIL_PATTERN, LIMITS, NOT_BLANK_PATTERN } from '../limits';
import { credentialMessages } from '../messages';
import { answersError, noNul, objectId, timestamp } from './common';

// ---------- request bodies ----------

const emailAddress = noNul('email', {
  type: 'string',
  maxLength: LIMITS.emailMax,
  pattern: EMAIL_PATTERN,
  'x-wellFormed': true,
  description: `Trimmed and lowercased before use; at most ${LIMITS.emailMax} characters; must look like an address, with no control or invisible formatting characters.`,
  'x-messages': {
    maxLength: credentialMessages.badEmail,
    pattern: credentialMessages.badEmail,
    'x-wellFormed': credentialMessages.badEmail,
  },
});

const displayName = noNul('displayName', {
  type: 'string',
  maxLength: 200,
  pattern: DISPLAY_NAME_PATTERN,
  description: `The name others see on the account's posts: 1 to ${LIMITS.displayNameMax} characters once trimmed (it is stored trimmed), with no control or formatting characters. Not unique.`,
  'x-messages': credentialMessages.displayNameInvalid,
});

const PASSWORD_RULES = `at least ${LIMITS.passwordMin} characters and at most ${LIMITS.passwordMaxBytes} bytes of UTF-8 (${LIMITS.passwordMaxBytes} characters only when all are ASCII)`;

const newPassword = noNul('password', {
  type: 'string',
  minLength: LIMITS.passwordMin,
  maxLength: LIMITS.passwordMaxBytes,
  'x-maxBytes': LIMITS.passwordMaxBytes,
  description: `${PASSWORD_RULES.charAt(0).toUpperCase()}${PASSWORD_RULES.slice(1)}.`,
  'x-messages': {
    minLength: credentialMessages.shortPassword,
    maxLength: credentialMessages.longPassword,
    'x-maxBytes': credentialMessages.longPassword,
  },
});

/** Register: a new account's rules. A blank address is a missing one. */
export const credentialsSchema = {
  type: 'object',
  required: ['email', 'password'],
  properties: {
    email: {
      ...emailAddress,
      allOf: [{ type: 'string', pattern: NOT_BLANK_PATTERN, 'x-messages': credentialMessages.required }],
    },
    password: newPassword,
    displayName,
  },
  ...answersError(credentialMessages.required, credentialMessages.notStrings),
} as const;

/** Change what others see of the account: its display name, or none (null). */
export const updateMeSchema = {
  type: 'object',
  required: ['displayName'],
  properties: {
    displayName: {
      anyOf: [displayName, { type: 'null' }],
      'x-messages': {
        required: credentialMessages.displayNameRequired,
        default: credentialMessages.displayNameInvalid,
      },
    },
  },
  additionalProperties: false,
} as const;

/** Log in: any two strings. What cannot be an account is the same 401 as a wrong password. */
export const loginSchema = {
  type: 'object',
  required: ['email', 'password'],
  properties: {
    email: noNul('email', {
      type: 'string',
      pattern: NOT_BLANK_PATTERN,
      description: 'Trimmed and lowercased before use.',
      'x-messages': { pattern: credentialMessages.required },
    }),
    password: noNul('password', { type: 'string', minLength: 1 }),
  },
  ...answersError(credentialMessages.required, credentialMessages.notStrings),
} as const;

export const changePasswordSchema = {
  type: 'object',
  required: ['currentPassword', 'newPassword'],
  properties: {
    currentPassword: noNul('currentPassword', { type: 'string', minLength: 1 }),
    newPassword: { ...newPassword, description: `The rules of register: ${PASSWORD_RULES}.` },
  },
  ...answersError(credentialMessages.passwordChangeRequired, credentialMessages.passwordChangeNotStrings),
} as const;

export const deleteAccountSchema = {
  type: 'object',
  required: ['password'],
  properties: {
    password: noNul('password', { type: 'string', minLength: 1, description: 'The account’s current password.' }),
  },
  ...answersError(credentialMessages.passwordRequired, credentialMessages.passwordNotString),
} as const;

export const passwordResetRequestSchema = {
  type: 'object',
  required: ['email'],
  properties: { email: emailAddress },
  ...answersError(credentialMessages.emailRequired, credentialMessages.emailNotString),
} as const;

export const passwordResetConfirmSchema = {
  type: 'object',
  required: ['token', 'newPassword'],
  properties: {
    token: noNul('token', { type: 'string', minLength: 1, description: 'The token from the e-mail’s link.' }),
    newPassword: { ...newPassword, description: `The rules of register: ${PASSWORD_RULES}.` },
  },
  ...answersError(credentialMessages.resetRequired, credentialMessages.resetNotStrings),
} as const;

/** Refresh and log out: the refresh token a login, a register or the last refresh answered. */
export const refreshTokenBodySchema = {
  type: 'object',
  required: ['refreshToken'],
  properties: {
    refreshToken: noNul('refreshToken', {
      type: 'string',
      minLength: 1,
      maxLength: 256,
      description: 'Opaque; a login, a register or the last refresh answered it.',
    }),
  },
  ...answersError(credentialMessages.refreshTokenRequired, credentialMessages.refreshTokenNotString),
} as const;

/**
 * Log out: the refresh token of the session to end, when there is one: a Bearer token alone is
 * revoked too, and in cookie mode the token comes from the cookie, which may be gone.
 */
export const logoutBodySchema = {
  type: 'object',
  properties: { refreshToken: refreshTokenBodySchema.properties.refreshToken },
  ...answersError(credentialMessages.refreshTokenRequired, credentialMessages.refreshTokenNotString),
} as const;

// ---------- response bodies ----------

/**
 * A session's tokens: the access token (the contract's JWT), the refresh token that gets the next
 * pair, and the access token's lifetime in seconds.
 */
export const sessionTokensSchema = {
  type: 'object',
  required: ['token', 'refreshToken', 'expiresIn'],
  properties: {
    token: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$',
      description: 'The contract’s JWT.',
    },
    refreshToken: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]{104}$',
      description: 'Opaque to clients (signed by the server, with 256 random bits); never a JWT.',
    },
    expiresIn: { type: 'integer', minimum: 1, description: 'The access token’s lifetime, in seconds.' },
    emailVerified: {
      type: 'boolean',
      description:
        'Whether the account’s address is verified: in the answers of register, login, a password change and a provider’s sign-in (not of a refresh). Never in the token, which carries the user id only.',
    },
  },
  additionalProperties: false,
} as const;

/** A session's answer in cookie mode: the refresh token is in the HttpOnly cookie, never in the body. */
export const cookieSessionTokensSchema = {
  type: 'object',
  required: ['token', 'expiresIn'],
  properties: {
    token: sessionTokensSchema.properties.token,
    expiresIn: sessionTokensSchema.properties.expiresIn,
    emailVerified: sessionTokensSchema.properties.emailVerified,
  },
  additionalProperties: false,
} as const;

/** One of the caller's live sessions: a login and every token refreshed from it. */
export const sessionSchema = {
  type: 'object',
  required: ['id', 'createdAt', 'lastUsedAt', 'userAgent', 'device', 'current'],
  properties: {
    id: objectId,
    createdAt: timestamp,
    lastUsedAt: timestamp,
    userAgent: { type: ['string', 'null'], description: 'The User-Agent of the login, when it sent one.' },
    device: {
      type: 'string',
      description:
        'The User-Agent in words, for a person: the browser and the system (“Chrome on Linux”, “Safari on iPhone”), either alone when only one is known, or “Unknown device”.',
    },
    current: {
      type: 'boolean',
      description:
        'True for the session of the request’s own tokens (its access token, or in cookie mode its refresh token cookie), false for every other.',
    },
  },
  additionalProperties: false,
} as const;

export const sessionListSchema = { type: 'array', items: sessionSchema } as const;

/** The caller's account. */
export const meSchema = {
  type: 'object',
  required: ['_id', 'email', 'displayName', 'emailVerified', 'createdAt'],
  properties: {
    _id: objectId,
    email: { type: 'string' },
    displayName: { type: ['string', 'null'], description: 'The name others see; null when none was given.' },
    emailVerified: {
      type: 'boolean',
      description: 'Whether the owner proved the address is theirs: a mailed link, or a provider that vouched for it.',
    },
    createdAt: timestamp,
  },
  additionalProperties: false,
} as const;

/** What anyone may know of an account: its id and display name, never its address. */
export const publicUsersSchema = {
  type: 'array',
  maxItems: LIMITS.userIdsMax,
  items: {
    type: 'object',
    required: ['_id', 'displayName'],
    properties: { _id: objectId, displayName: { type: ['string', 'null'] } },
    additionalProperties: false,
  },
} as const;

export const acceptedSchema = {
  type: 'object',
  required: ['message'],
  properties: { message: { type: 'string' } },
  additionalProperties: false,
} as const;
