/** The operations of the `auth` tag: accounts and sessions. */
import { USER_IDS_PATTERN } from '../limits';
import { EXAMPLE_EMAIL, EXAMPLE_NEW_PASSWORD, EXAMPLE_PASSWORD, slot } from './examples';
import { operation } from './operation';
import { ref } from './responses';

/** A session's answer, in the body or (cookie mode) with the refresh token in a cookie. */
const SESSION = { oneOf: [ref('SessionTokens'), ref('CookieSessionTokens')] };

export const authPaths = {
  '/api/auth/register': {
    post: operation({
      id: 'register',
      summary: 'Register an account and start its first session',
      description:
        'Create an account; returns its first session: the access token, a refresh token and the access token’s lifetime.',
      tag: 'auth',
      refreshCookie: true,
      auth: 'none',
      body: ref('Credentials'),
      example: { email: EXAMPLE_EMAIL, password: EXAMPLE_PASSWORD, displayName: 'Ada' },
      ok: { status: 201, description: 'Registered.', schema: SESSION },
    }),
  },
  '/api/auth/login': {
    post: operation({
      id: 'login',
      summary: 'Log in and start a session',
      description:
        'Log in; returns a token. Unknown e-mail and wrong password are indistinguishable. After 5 failed logins for an e-mail address from one client address, or 50 from all, further attempts get 429 with Retry-After (2 s, doubling), for any address, account or not; a client address that logged in to the account before is spared the second. A successful login or registration answers a device token in the `X-Device-Token` header and the `cs_device` cookie; a login that gives it back (that header, or the cookie) is served ahead of a crowd and spared both, until the token fails 5 logins in an hour.',
      tag: 'auth',
      refreshCookie: true,
      auth: 'none',
      body: ref('Login'),
      example: { email: EXAMPLE_EMAIL, password: EXAMPLE_PASSWORD },
      ok: { status: 200, description: 'Logged in: a new session.', schema: SESSION },
      errors: ['Unauthorized'],
    }),
  },
  '/api/auth/refresh': {
    post: operation({
      id: 'refresh',
      summary: 'Renew a session with its refresh token',
      description:
        'The next pair of a session, for its refresh token, which is then spent. The same token presented again within 10 s answers the same pair (two tabs, a retried request); after that it counts as stolen: 401, and the session ends. An unknown, spent, expired or ended one is 401. A session ends 14 days after its last refresh and 90 days after its login.',
      tag: 'auth',
      refreshCookie: true,
      auth: 'none',
      body: ref('RefreshToken'),
      example: { refreshToken: slot('refreshToken') },
      bodyOptional: true,
      ok: { status: 200, description: 'Refreshed.', schema: SESSION },
      errors: ['Unauthorized'],
    }),
  },
  '/api/auth/logout': {
    post: operation({
      id: 'logout',
      summary: 'Log out: end the session of a refresh token',
      description:
        'End the session of this refresh token: it and every token refreshed from it stop working, and so do the access tokens it was issued. With a Bearer token, that access token stops working too (within about a second on every replica); it must be one this service signed (expired or revoked already, it changes nothing), or the answer is 401 and nothing ends. 204 whether or not anything was live.',
      tag: 'auth',
      refreshCookie: true,
      auth: 'optional',
      body: ref('Logout'),
      example: { refreshToken: slot('refreshToken') },
      bodyOptional: true,
      ok: { status: 204, description: 'The session is over.' },
    }),
  },
  '/api/auth/sessions': {
    get: operation({
      id: 'listSessions',
      summary: 'List the caller’s live sessions, newest first',
      description:
        'Each with its User-Agent and, for a person, its `device` in words. The caller’s own session is `current: true` (every other is `false`): the one its access token was issued for, or in cookie mode the one of its refresh token cookie. A token from no session (none is `current`) is still answered the list.',
      tag: 'auth',
      auth: 'required',
      refreshCookie: true,
      ok: { status: 200, description: 'The sessions.', schema: ref('SessionList') },
    }),
    delete: operation({
      id: 'endAllSessions',
      summary: 'Log out everywhere: end every session of the caller',
      tag: 'auth',
      auth: 'required',
      ok: { status: 204, description: 'Every session is over.' },
    }),
  },
  '/api/auth/sessions/{id}': {
    delete: operation({
      id: 'endSession',
      summary: 'End one of the caller’s sessions',
      description: 'Another user’s session is the same 404 as an unknown one.',
      tag: 'auth',
      auth: 'required',
      pathId: { description: 'The session’s id, as the list gives it.', example: slot('sessionId') },
      ok: { status: 204, description: 'The session is over.' },
    }),
  },
  '/api/auth/me': {
    get: operation({
      id: 'me',
      summary: 'Get the caller’s account',
      tag: 'auth',
      auth: 'required',
      ok: { status: 200, description: 'The account.', schema: ref('Me') },
    }),
    patch: operation({
      id: 'updateMe',
      summary: 'Set, change or clear (null) the caller’s display name',
      tag: 'auth',
      auth: 'required',
      body: ref('UpdateMe'),
      example: { displayName: 'Ada Lovelace' },
      ok: { status: 200, description: 'The account, as it now is.', schema: ref('Me') },
    }),
  },
  '/api/users': {
    get: operation({
      id: 'users',
      summary: 'Get the display names of up to 50 accounts at once',
      tag: 'auth',
      auth: 'none',
      query: [
        {
          name: 'ids',
          description:
            'Account ids (a post’s `authorId`), comma-separated, 1 to 50. Unknown ids are left out of the answer; 400 when one is not an id.',
          required: true,
          schema: { type: 'string', pattern: USER_IDS_PATTERN },
          example: slot('userId'),
        },
      ],
      errors: ['BadRequest'],
      ok: {
        status: 200,
        description: 'Each known account’s id and display name (null when it has none); never an address.',
        schema: ref('PublicUsers'),
      },
    }),
  },
  '/api/auth/password': {
    put: operation({
      id: 'changePassword',
      summary: 'Change the caller’s password, given the current one',
      description:
        'Set a new password, given the current one. Every session of the account ends, and the answer is a new one for the caller. Access tokens issued before it are revoked: every gateway and service refuses them within about a second. A wrong current password is 401 and counts toward the failed-login throttle.',
      tag: 'auth',
      refreshCookie: true,
      auth: 'required',
      body: ref('ChangePassword'),
      example: { currentPassword: EXAMPLE_PASSWORD, newPassword: EXAMPLE_NEW_PASSWORD },
      ok: { status: 200, description: 'Changed: a new session.', schema: SESSION },
    }),
  },
  '/api/auth/account': {
    delete: operation({
      id: 'deleteAccount',
      summary: 'Delete the caller’s account and everything it owns',
      description:
        'Delete the caller’s account, given its password. 204 once it is gone from identity; its posts, notes and files are deleted in every service right after. Writes with a token of a deleted account get 401.',
      tag: 'auth',
      auth: 'required',
      body: ref('DeleteAccount'),
      example: { password: EXAMPLE_PASSWORD },
      ok: { status: 204, description: 'The account is deleted.' },
    }),
  },
  '/api/auth/password-reset': {
    post: operation({
      id: 'requestPasswordReset',
      summary: 'E-mail a single-use link to set a new password',
      description:
        'The same 202, in the same time, whether or not the address has an account; 429 after 3 requests for one address in an hour; 503 when the server sends no e-mail.',
      tag: 'auth',
      auth: 'none',
      body: ref('PasswordResetRequest'),
      example: { email: EXAMPLE_EMAIL },
      ok: { status: 202, description: 'Accepted.', schema: ref('Accepted') },
    }),
  },
  '/api/auth/password-reset/confirm': {
    post: operation({
      id: 'confirmPasswordReset',
      summary: 'Set a new password with the token from the e-mail',
      description:
        'A token works once, until it expires or a newer one is sent; any other is 400 with one message. Every session of the account ends, and its access tokens are refused within about a second.',
      tag: 'auth',
      auth: 'none',
      body: ref('PasswordResetConfirm'),
      example: { token: slot('resetToken'), newPassword: EXAMPLE_PASSWORD },
      ok: { status: 204, description: 'The password is set; log in with it.' },
    }),
  },
} as const;
