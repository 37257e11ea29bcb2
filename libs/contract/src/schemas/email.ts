/** E-mail verification and e-mail change: what their routes take and answer, and the refusal of REQUIRE_VERIFIED_EMAIL. */
import { EMAIL_PATTERN, LIMITS } from '../limits';
import { credentialMessages } from '../messages';
import { answersError, noNul } from './common';

export const emailRequestMessages = {
  tokenRequired: 'token is required',
  tokenNotString: 'token must be a string',
  changeRequired: 'newEmail and password are required',
  changeNotStrings: 'newEmail and password must be strings',
  /**
   * The gateway's 403 for a write by an account whose address is not verified, when
   * REQUIRE_VERIFIED_EMAIL is on.
   */
  verifyEmailFirst:
    'Verify your e-mail address first: open the link we sent you, or ask for a new one (POST /api/auth/email-verification)',
} as const;

/** The token of a mailed link, sent back when the person presses Confirm. */
export const emailTokenSchema = {
  type: 'object',
  required: ['token'],
  properties: {
    token: noNul('token', {
      type: 'string',
      minLength: 1,
      maxLength: 256,
      description: 'The token from the e-mail’s link (its `token` query parameter).',
    }),
  },
  ...answersError(emailRequestMessages.tokenRequired, emailRequestMessages.tokenNotString),
} as const;

export const emailChangeSchema = {
  type: 'object',
  required: ['newEmail', 'password'],
  properties: {
    newEmail: noNul('newEmail', {
      type: 'string',
      maxLength: LIMITS.emailMax,
      pattern: EMAIL_PATTERN,
      'x-wellFormed': true,
      description: `The address to move the account to: trimmed and lowercased, at most ${LIMITS.emailMax} characters, as register's.`,
      'x-messages': {
        maxLength: credentialMessages.badEmail,
        pattern: credentialMessages.badEmail,
        'x-wellFormed': credentialMessages.badEmail,
      },
    }),
    password: noNul('password', {
      type: 'string',
      minLength: 1,
      description:
        'The account’s current password. An account without one (made by a provider’s sign-in) sends any string, and proves itself by a sign-in less than 5 minutes old.',
    }),
  },
  ...answersError(emailRequestMessages.changeRequired, emailRequestMessages.changeNotStrings),
} as const;

/** A confirmation's answer: the account's address, verified. */
export const verifiedAddressSchema = {
  type: 'object',
  required: ['email', 'emailVerified'],
  properties: { email: { type: 'string' }, emailVerified: { type: 'boolean', const: true } },
  additionalProperties: false,
} as const;
