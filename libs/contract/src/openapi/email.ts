/** The operations of e-mail verification and e-mail change (tag `auth`), and the schemas they name. */
import * as s from '../schemas';
import { EXAMPLE_NEW_EMAIL, EXAMPLE_PASSWORD, slot } from './examples';
import { operation } from './operation';
import { failure, ref } from './responses';

export const emailSchemas = {
  EmailToken: s.emailTokenSchema,
  EmailChange: s.emailChangeSchema,
  VerifiedAddress: s.verifiedAddressSchema,
};

export const emailResponses = {
  VerifyEmailFirst: failure(
    'A write by an account whose e-mail address is not verified, when the server requires verified addresses (REQUIRE_VERIFIED_EMAIL; off by default).',
    s.emailRequestMessages.verifyEmailFirst,
  ),
};

const GATED_TAGS = new Set(['posts', 'notes', 'files']);
const WRITES = new Set(['post', 'put', 'patch', 'delete']);

/**
 * The document's paths, each protected write to posts, notes or files declaring the 403 of
 * REQUIRE_VERIFIED_EMAIL (the gateway's verified-email.ts refuses exactly those). Integer keys keep
 * the responses in the order of their statuses.
 */
export function withVerifiedEmailRule<P extends Record<string, Record<string, unknown>>>(paths: P): P {
  const gated = (method: string, op: { tags?: readonly string[]; security?: readonly unknown[] }) =>
    WRITES.has(method) && (op.security?.length ?? 0) > 0 && op.tags?.some((tag) => GATED_TAGS.has(tag)) === true;
  return Object.fromEntries(
    Object.entries(paths).map(([path, item]) => [
      path,
      Object.fromEntries(
        Object.entries(item).map(([method, op]) => {
          const operation = op as { tags?: string[]; security?: unknown[]; responses: Record<string, unknown> };
          if (!gated(method, operation)) return [method, op];
          const forbidden = { $ref: '#/components/responses/VerifyEmailFirst' };
          return [method, { ...operation, responses: { ...operation.responses, 403: forbidden } }];
        }),
      ),
    ]),
  ) as P;
}

const LINKS =
  'The link opens the web client (`#/verify-email?token=…`, `#/confirm-email-change?token=…`), which asks the person to press Confirm: opening a link uses nothing up, so a mail scanner that opens it first changes nothing.';

export const emailPaths = {
  '/api/auth/email-verification': {
    post: operation({
      id: 'requestEmailVerification',
      summary: 'E-mail a link that verifies the account’s address',
      description: `Registration sends the first link. One mail a minute per account: within it, 429 with Retry-After. 409 when the address is verified already; 503 when the server sends no e-mail. A new link makes the one before stop working. ${LINKS}`,
      tag: 'auth',
      auth: 'required',
      ok: { status: 202, description: 'A link is on its way.', schema: ref('Accepted') },
      errors: ['Conflict'],
    }),
  },
  '/api/auth/email-verification/confirm': {
    post: operation({
      id: 'confirmEmailVerification',
      summary: 'Verify the address with the token from the e-mail',
      description:
        'No login needed: the link may be opened on another device. A token works once, for 24 hours (EMAIL_TOKEN_TTL), until a newer one is sent, and only while the address it was sent to is still the account’s; any other is 400 with one message.',
      tag: 'auth',
      auth: 'none',
      body: ref('EmailToken'),
      example: { token: slot('verificationToken') },
      ok: { status: 200, description: 'The address is verified.', schema: ref('VerifiedAddress') },
    }),
  },
  '/api/auth/email-change': {
    post: operation({
      id: 'requestEmailChange',
      summary: 'Ask to move the account to a new address',
      description: `Checks the current password (a wrong one is 401, as a password change answers; an account without a password proves itself by a sign-in less than 5 minutes old). Mails a link to the new address and a notice, with no link, to the old one. The answer is the same whether or not the new address has an account: one that has gets a notice instead of the link. 400 for the account’s own address; one request a minute per account (429); 503 when the server sends no e-mail. ${LINKS}`,
      tag: 'auth',
      auth: 'required',
      body: ref('EmailChange'),
      example: { newEmail: EXAMPLE_NEW_EMAIL, password: EXAMPLE_PASSWORD },
      ok: { status: 202, description: 'Accepted.', schema: ref('Accepted') },
    }),
  },
  '/api/auth/email-change/confirm': {
    post: operation({
      id: 'confirmEmailChange',
      summary: 'Move the account to the new address, with the token from the e-mail',
      description:
        'No login needed (the link may be opened on another device). The account’s address becomes the new one, verified; login takes the new address only; every password-reset and verification link sent before stops working; every session ends but the one of the request’s own access token, when it sends one of the account’s. A token works once, for 24 hours, until a newer change is asked for; any other is 400. 409 when the new address got an account meanwhile.',
      tag: 'auth',
      auth: 'optional',
      body: ref('EmailToken'),
      example: { token: slot('emailChangeToken') },
      ok: { status: 200, description: 'The address is changed, and verified.', schema: ref('VerifiedAddress') },
      errors: ['Conflict'],
    }),
  },
} as const;
