/**
 * The OpenAPI 3.1 document of every public route of the gateway: request and response schemas,
 * every status code with its error shape, and the bearer security scheme. The gateway serves it
 * at /openapi.json; the test suites check every response they receive against it.
 */
import { messages } from '@cs/errors';
import { LIMITS, OBJECT_ID_PATTERN, TAG_PATTERN } from './limits';
import { ROUTE_ALIASES } from './route-aliases';
import * as s from './schemas';

export const API_VERSION = '1.0.0';

type Schema = Record<string, unknown>;
type AuthRule = 'required' | 'optional' | 'none';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Schema) => ({ 'application/json': { schema } });
const response = (description: string, schema?: Schema, headers?: Schema) => ({
  description,
  ...(schema ? { content: json(schema) } : {}),
  ...(headers ? { headers } : {}),
});

/**
 * A JSON error answer, `{error}`, with an example of its message: a viewer of the document would
 * otherwise make one up from the schema, the validation step's `errors` included.
 */
const failure = (description: string, example: string, headers?: Schema) => ({
  description,
  content: { 'application/json': { schema: ref('Error'), example: { error: example } } },
  ...(headers ? { headers } : {}),
});

/** Error responses shared by operations, each with the contract's `{error}` shape. */
const errorResponses = {
  BadRequest: response('The request is malformed or breaks a rule.', {
    oneOf: [ref('Error'), ref('ValidationErrors')],
  }),
  Unauthorized: failure('No Bearer token (no-token-provided), or an invalid or expired one.', messages.noToken),
  Forbidden: failure(
    'Cookie mode asked for by a request the browser marks cross-site.',
    'Cookie mode is only for requests from this site',
  ),
  NotFound: failure('No such resource, or not the caller’s.', messages.notFound),
  Conflict: failure(
    'The resource changed at the same time, or is in another state.',
    'The post changed at the same time; try again',
  ),
  PayloadTooLarge: failure('The body is larger than 100 kB.', messages.bodyTooLarge),
  UnsupportedMediaType: failure('A body that is not JSON.', messages.unsupportedMediaType),
  TooManyRequests: failure(
    'Over the rate limit for this client (or, on login, the account’s failed-login throttle).',
    messages.tooManyRequests,
    {
      'Retry-After': { description: 'Seconds to wait.', schema: { type: 'string' } },
    },
  ),
  ServerError: failure('An unexpected failure; the message names the operation.', 'Failed to fetch posts'),
  BadGateway: failure('The owning service could not be reached.', messages.upstreamUnavailable),
  Unavailable: failure(
    'A dependency (database, storage, the files service, the rate-limit store) is unavailable.',
    messages.unavailable,
  ),
  GatewayTimeout: failure('The owning service did not answer in time.', messages.upstreamTimeout),
} as const;

type ErrorName = keyof typeof errorResponses;
const STATUS: Record<ErrorName, number> = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  TooManyRequests: 429,
  ServerError: 500,
  BadGateway: 502,
  Unavailable: 503,
  GatewayTimeout: 504,
};

// ---------- the examples, and the order in which every one of them succeeds ----------

/**
 * Values an earlier step of TRY_IT answered, written `<name>` in the examples: whoever tries the
 * sequence fills them in (gateway/test/openapi-examples.test.ts does, from the answers).
 */
const PLACEHOLDERS = {
  refreshToken:
    'the `refreshToken` of the latest answer with a session (register, login, refresh, the password change)',
  userId: 'the `_id` that `GET /api/auth/me` answered',
  sessionId: 'the `id` of the last session `GET /api/auth/sessions` lists: the oldest, register’s',
  postId: 'the `_id` that `POST /api/posts` answered',
  uploadKey: 'the `key` that `POST /upload-url` answered',
  noteId: 'the `_id` that `POST /api/notes` answered',
  uploadId: 'the `uploadId` that `POST /api/multipart-uploads` answered',
  resetToken: 'the `token` in the link of the e-mail that `POST /api/auth/password-reset` sent',
} as const;

const slot = (name: keyof typeof PLACEHOLDERS) => `<${name}>`;

/** The account of the examples: register's password, changed by the password change and set again by the reset. */
const EXAMPLE_EMAIL = 'ada@example.com';
const EXAMPLE_PASSWORD = 'correct horse battery staple';
const EXAMPLE_NEW_PASSWORD = 'a new passphrase, 2nd';
/** The file of the one-PUT upload (a short text), and the large one: one part at the default part size. */
const EXAMPLE_FILE_BYTES = 12;
const EXAMPLE_LARGE_FILE_BYTES = 6 * 1024 * 1024;

/**
 * Every operation, in an order in which each example succeeds: `METHOD /path`, or `PUT <url>` for a
 * request straight to storage with a link the step before answered. info.description lists it.
 */
const TRY_IT: readonly (readonly [step: string, note?: string])[] = [
  ['GET /healthz'],
  ['GET /readyz'],
  ['GET /api/upload-rules'],
  ['POST /api/auth/register', 'the first session; set “Authorize” to its `token`'],
  ['POST /api/auth/login', 'a second session'],
  ['POST /api/auth/refresh', 'that session’s next pair'],
  ['GET /api/auth/me'],
  ['PATCH /api/auth/me'],
  ['GET /api/users'],
  ['GET /api/auth/sessions'],
  ['DELETE /api/auth/sessions/{id}', 'ends register’s session'],
  ['POST /api/posts', 'a draft'],
  ['GET /api/posts/{id}'],
  ['PUT /api/posts/{id}', 'publishes it'],
  ['PUT /api/posts/{id}/tags'],
  ['PATCH /api/posts/{id}', 'title and tags in one write'],
  ['GET /api/posts'],
  ['GET /api/posts/my-posts'],
  ['POST /upload-url'],
  [
    'PUT <url>',
    `the file itself (${EXAMPLE_FILE_BYTES} bytes, as \`size\` said) to the \`url\` just answered, with exactly its \`headers\`; storage answers 200`,
  ],
  ['POST /api/notes', 'with the file attached'],
  ['GET /api/notes'],
  ['GET /api/notes/{id}'],
  ['PUT /api/notes/{id}'],
  ['GET /notes/{id}/attachment'],
  ['POST /api/multipart-uploads', 'one part at the default part size (8 MiB)'],
  ['POST /api/multipart-uploads/{uploadId}/part-urls'],
  ['PUT <url>', 'each part to its `url` (storage): `Content-Length` bytes, with exactly its `headers`'],
  ['GET /api/multipart-uploads/{uploadId}'],
  ['POST /api/multipart-uploads/{uploadId}/complete'],
  ['DELETE /api/multipart-uploads/{uploadId}', 'the file was never attached, so storage drops it'],
  ['POST /api/realtime/ticket'],
  ['GET /api/realtime', 'a stream that stays open (“Try it out” waits for its end, `curl -N` shows it)'],
  ['DELETE /api/notes/{id}'],
  ['DELETE /api/posts/{id}'],
  ['POST /api/auth/logout', 'ends the session'],
  ['POST /api/auth/login'],
  ['DELETE /api/auth/sessions', 'ends every session'],
  ['POST /api/auth/login'],
  ['PUT /api/auth/password', 'a new session'],
  ['POST /api/auth/password-reset', 'needs a server that sends e-mail (503 without)'],
  ['POST /api/auth/password-reset/confirm', 'sets register’s password again; every session ends'],
  ['POST /api/auth/login'],
  ['DELETE /api/auth/account', 'the account is gone, and the sequence can be tried again'],
];

const TRY_IT_DESCRIPTION =
  `**Trying it out.** Every example in this document succeeds when the operations are tried in this order, on a system where ${EXAMPLE_EMAIL} has no account yet. ` +
  'Set “Authorize” to the `token` of the latest answer that has one (register, login, refresh, the password change). ' +
  'A value in angle brackets, such as `<postId>`, is one that an earlier step answered: fill it in.\n\n' +
  TRY_IT.map(([step, note], i) => `${i + 1}. \`${step}\`${note ? `: ${note}` : ''}`).join('\n') +
  '\n\nThe placeholders:\n\n' +
  Object.entries(PLACEHOLDERS)
    .map(([name, from]) => `- \`<${name}>\`: ${from}`)
    .join('\n');

/** The last line of the description of a route that another path serves too (documented once, here). */
function alsoServedAt(path: string): string {
  if (!(path in ROUTE_ALIASES)) throw new Error(`${path} is not in ROUTE_ALIASES`);
  return `Also served at \`${path}\`.`;
}

/** A path parameter `{id}`: what it names, and its example in the sequence of TRY_IT (a placeholder). */
interface PathId {
  description: string;
  example: string;
}

interface OperationSpec {
  id: string;
  /** One line, under 70 characters: what the operation does. */
  summary: string;
  /** The rest: rules, limits, statuses worth knowing. */
  description?: string;
  tag: string;
  auth: AuthRule;
  body?: Schema;
  /** The body that succeeds at this operation's step of TRY_IT, placeholders filled in. */
  example?: unknown;
  /** Query parameters: strings, unless `schema` says more (an enum, for a typed client). */
  query?: { name: string; description: string; required?: boolean; example?: string; schema?: Schema }[];
  pathId?: PathId;
  /** A multipart upload's id in the path: anything that is not one of the caller's is 404. */
  uploadId?: boolean;
  ok: { status: number; description: string; schema?: Schema };
  errors?: ErrorName[];
  /** A cacheable read: ETag on 200, and 304 when If-None-Match names it. */
  cached?: boolean;
  /** A keyset-paged list: `limit` and `cursor` in, the next page in a Link header. */
  paged?: { defaultLimit: number; maxLimit: number };
  /** A route of sessions that cookie mode changes: the X-Refresh-Token header (refresh-cookie.ts in identity). */
  refreshCookie?: boolean;
  /** The body may be left out (cookie mode's refresh and logout). */
  bodyOptional?: boolean;
}

const LINK_HEADERS = {
  Link: {
    description:
      'The next page, when there is one: `</same/path?limit=…&cursor=…>; rel="next"` (RFC 8288). Follow it as it is; the cursor is opaque.',
    schema: { type: 'string' },
  },
};

const ETAG_HEADERS = {
  ETag: { description: 'A validator of the body; send it back as If-None-Match.', schema: { type: 'string' } },
  'Cache-Control': {
    description: '`private, no-cache` on an anonymous read; `no-store` when the request carried a token.',
    schema: { type: 'string' },
  },
  'Server-Timing': {
    description:
      "db;dur=… (the database part) and app;dur=… (the whole request), in ms. Only when the gateway's SERVER_TIMING is on (off by default).",
    schema: { type: 'string' },
  },
};

function operation({
  id,
  summary,
  description,
  tag,
  auth,
  body,
  example,
  query = [],
  pathId,
  uploadId = false,
  ok,
  errors = [],
  cached = false,
  paged,
  refreshCookie = false,
  bodyOptional = false,
}: OperationSpec) {
  const names = new Set<ErrorName>(errors);
  if (paged) {
    names.add('BadRequest');
    query = [
      ...query,
      {
        name: 'limit',
        description: `How many to give, 1 to ${paged.maxLimit} (default ${paged.defaultLimit}); a larger number gives ${paged.maxLimit}.`,
      },
      {
        name: 'cursor',
        description: 'Where the page starts: from the Link header of the page before. 400 when it is not one.',
      },
    ];
  }
  if (body) for (const n of ['BadRequest', 'PayloadTooLarge', 'UnsupportedMediaType'] as const) names.add(n);
  if (auth !== 'none') names.add('Unauthorized');
  if (refreshCookie) names.add('Forbidden');
  if (pathId) {
    names.add('BadRequest');
    names.add('NotFound');
  }
  if (uploadId) names.add('NotFound');
  for (const n of ['TooManyRequests', 'ServerError', 'BadGateway', 'Unavailable', 'GatewayTimeout'] as const)
    names.add(n);
  const responses: Record<string, unknown> = {
    [ok.status]: response(ok.description, ok.schema, cached ? ETAG_HEADERS : paged ? LINK_HEADERS : undefined),
  };
  if (cached) responses[304] = response('Not modified: the If-None-Match validator still names the current body.');
  for (const n of [...names].sort((a, b) => STATUS[a] - STATUS[b])) {
    responses[STATUS[n]] = { $ref: `#/components/responses/${n}` };
  }
  const ifNoneMatch = {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: 'An ETag from an earlier answer.',
    schema: { type: 'string' },
  };
  const cookieMode = {
    name: 'X-Refresh-Token',
    in: 'header',
    required: false,
    description:
      'Send `cookie` for cookie mode (a web client on the API’s own origin): the refresh token then lives in the `cs_refresh` cookie (HttpOnly; SameSite=Strict; Path=/api/auth; Secure behind HTTPS), answers carry `{token, expiresIn}`, and refresh and logout take no body. A request the browser marks cross-site is 403.',
    schema: { type: 'string', enum: ['cookie'] },
  };
  const parameters = [
    ...(cached ? [ifNoneMatch] : []),
    ...(refreshCookie ? [cookieMode] : []),
    ...(pathId
      ? [
          {
            name: 'id',
            in: 'path',
            required: true,
            description: pathId.description,
            schema: s.objectIdParamSchema,
            example: pathId.example,
          },
        ]
      : []),
    ...(uploadId
      ? [
          {
            name: 'uploadId',
            in: 'path',
            required: true,
            description: 'The id create answered (a UUID); another user’s is the same 404 as an unknown one.',
            schema: s.uploadIdParamSchema,
            example: slot('uploadId'),
          },
        ]
      : []),
    ...query.map((q) => ({
      name: q.name,
      in: 'query',
      required: q.required ?? false,
      description: q.description,
      schema: q.schema ?? { type: 'string' },
      ...(q.example === undefined ? {} : { example: q.example }),
    })),
  ];
  return {
    operationId: id,
    summary,
    ...(description ? { description } : {}),
    tags: [tag],
    ...(auth === 'required'
      ? { security: [{ bearerAuth: [] }] }
      : auth === 'optional'
        ? { security: [{}, { bearerAuth: [] }] }
        : { security: [] }),
    ...(parameters.length ? { parameters } : {}),
    ...(body
      ? {
          requestBody: {
            required: !bodyOptional,
            content: { 'application/json': { schema: body, ...(example === undefined ? {} : { example }) } },
          },
        }
      : {}),
    responses,
  };
}

const POST_ID: PathId = {
  description: 'The post’s record identifier (24 hex digits; anything else is 400).',
  example: slot('postId'),
};
const NOTE_ID: PathId = {
  description: 'The note’s record identifier (24 hex digits; anything else is 400).',
  example: slot('noteId'),
};

/** A session's answer, in the body or (cookie mode) with the refresh token in a cookie. */
const SESSION = { oneOf: [ref('SessionTokens'), ref('CookieSessionTokens')] };

export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Content service API',
    version: API_VERSION,
    description:
      'Accounts and login with signed tokens, posts, notes, and time-limited links for direct upload to and download from object storage. Errors are `{error}`; the validation step answers `{errors: [{field, message}]}`. Bodies are JSON, at most 100 kB.\n\n' +
      'Sessions: register and login answer a session, `{token, refreshToken, expiresIn}`. The access token is the contract’s JWT (`id`, `iat`, `exp`), verified without a database read; `POST /api/auth/refresh` spends the refresh token for the next pair (the same token again within 10 s answers the same pair; later, it ends the session as stolen). Logout, ending a session, logging out everywhere, a new password and deleting the account revoke access tokens too: every gateway and service refuses them within about a second. A client that never calls these sees the contract’s tokens, valid until they expire. A web page on this origin can keep the refresh token in an HttpOnly cookie instead (`X-Refresh-Token: cookie`).\n\n' +
      'Each route is documented once: `/upload-url` and `/notes/{id}/attachment` at the contract’s own paths, every other route under `/api`. The routes of files and attachments are also served under the other prefix (`/api/upload-url`, `/multipart-uploads`…), as their descriptions say.\n\n' +
      TRY_IT_DESCRIPTION,
  },
  servers: [{ url: '/' }],
  tags: [
    {
      name: 'auth',
      description: 'Register, log in, refresh and end sessions, change or reset a password, delete an account.',
    },
    { name: 'posts', description: 'Posts: drafts, publishing, the public list.' },
    { name: 'notes', description: 'Notes owned by a user, with an optional attachment.' },
    { name: 'files', description: 'Signed upload links: one PUT, or a large file in parts.' },
    {
      name: 'realtime',
      description: 'Changes of posts and notes pushed as Server-Sent Events, resumable with Last-Event-ID.',
    },
    { name: 'health', description: 'Liveness and readiness.' },
  ],
  paths: {
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
    '/api/posts': {
      get: operation({
        id: 'listPosts',
        summary: 'List published posts, newest first unless sorted otherwise',
        description:
          'Paginated (`page`, `limit`), optionally by tag, by author, or both, and in another order (`sort`). Every filter and order is as fresh as the list: a publish or an unpublish, once answered, is in the next list read anywhere.',
        tag: 'posts',
        auth: 'optional',
        query: [
          { name: 'page', description: 'Positive integer, default 1; anything else falls back to 1.' },
          {
            name: 'limit',
            description: `Positive integer, default ${LIMITS.postsPageDefault}, capped at ${LIMITS.postsPageMax}; anything else falls back to ${LIMITS.postsPageDefault}.`,
          },
          { name: 'tag', description: `Applied only when it matches ${TAG_PATTERN}; lowercased.` },
          {
            name: 'author',
            description: `Only this account’s posts (a post’s \`authorId\`). Applied only when it matches ${OBJECT_ID_PATTERN}; lowercased; otherwise ignored, as a bad tag is.`,
          },
          {
            name: 'sort',
            description:
              '`newest` (the default: by createdAt, newest first), `oldest` (its reverse), or `title` (case-folded, A to Z; equal titles newest first, then by id). Any case; anything else is ignored and the list is newest first.',
            schema: { type: 'string', enum: s.POST_SORTS },
          },
        ],
        ok: { status: 200, description: 'One page.', schema: ref('PostPage') },
        cached: true,
      }),
      post: operation({
        id: 'createPost',
        summary: 'Create a post (a draft) owned by the caller',
        tag: 'posts',
        auth: 'required',
        body: ref('CreatePost'),
        example: { title: 'Hello, world', body: 'My first post, written from the API reference.', tags: ['hello'] },
        ok: { status: 201, description: 'Created.', schema: ref('Post') },
      }),
    },
    '/api/posts/my-posts': {
      get: operation({
        id: 'myPosts',
        summary: 'List the caller’s posts of both statuses, newest first',
        description: `All of them, up to ${LIMITS.myPostsPageMax}; past that, the rest through the Link header.`,
        tag: 'posts',
        auth: 'required',
        paged: { defaultLimit: LIMITS.myPostsPageMax, maxLimit: LIMITS.myPostsPageMax },
        ok: { status: 200, description: 'The posts.', schema: { type: 'array', items: ref('Post') } },
      }),
    },
    '/api/posts/{id}': {
      get: operation({
        id: 'getPost',
        summary: 'Get a post',
        description: 'A draft only to its author.',
        tag: 'posts',
        auth: 'optional',
        pathId: POST_ID,
        ok: { status: 200, description: 'The post.', schema: ref('Post') },
        cached: true,
      }),
      put: operation({
        id: 'updatePost',
        summary: 'Change the title, body or status of the caller’s post',
        tag: 'posts',
        auth: 'required',
        pathId: POST_ID,
        description:
          'Publishing, unpublishing and editing a published post reach every reader. A post’s first publish is never counted; past it (unpublishing, publishing again, editing while published) an account may make 60 such changes a minute (PUBLIC_CHANGES_PER_MINUTE), then 429 with Retry-After. Changes to drafts are not counted.',
        body: ref('UpdatePost'),
        example: { status: 'published' },
        ok: { status: 200, description: 'The updated post.', schema: ref('Post') },
        errors: ['Conflict', 'TooManyRequests'],
      }),
      patch: operation({
        id: 'patchPost',
        summary: 'Change any of the title, body, status and tags of a post',
        tag: 'posts',
        auth: 'required',
        pathId: POST_ID,
        description:
          'Not the contract’s PUT: tags too, and every field sent is applied in one write, or none when one breaks a rule (the rules and messages of PUT and of `PUT /api/posts/{id}/tags`). The answer is the post as `GET` answers it. Public changes are counted as PUT counts them.',
        body: ref('PatchPost'),
        example: { title: 'Hello again, world', tags: ['hello', 'travel'] },
        ok: { status: 200, description: 'The updated post.', schema: ref('Post') },
        errors: ['Conflict', 'TooManyRequests'],
      }),
      delete: operation({
        id: 'deletePost',
        summary: 'Delete the caller’s post',
        description: '204 whether or not one was deleted.',
        tag: 'posts',
        auth: 'required',
        pathId: POST_ID,
        ok: { status: 204, description: 'Done.' },
      }),
    },
    '/api/posts/{id}/tags': {
      put: operation({
        id: 'setPostTags',
        summary: 'Replace the tags of the caller’s post',
        description:
          'All of them at once; `[]` removes every one. Not the contract’s PUT, which ignores tags. A published post that leaves a tag is a `posts.remove` to the live subscribers of that tag.',
        tag: 'posts',
        auth: 'required',
        pathId: POST_ID,
        body: ref('PostTags'),
        example: { tags: ['intro', 'travel'] },
        ok: { status: 200, description: 'The updated post.', schema: ref('Post') },
        errors: ['Conflict'],
      }),
    },
    '/api/notes': {
      get: operation({
        id: 'listNotes',
        summary: 'List the caller’s notes, newest first',
        description: 'A page at a time (the next page through the Link header).',
        tag: 'notes',
        auth: 'required',
        paged: { defaultLimit: LIMITS.notesPageDefault, maxLimit: LIMITS.notesPageMax },
        ok: { status: 200, description: 'The notes.', schema: { type: 'array', items: ref('Note') } },
      }),
      post: operation({
        id: 'createNote',
        summary: 'Create a note',
        description: 'An `attachmentKey` must be an upload of the caller’s.',
        tag: 'notes',
        auth: 'required',
        body: ref('CreateNote'),
        example: { title: 'Shopping list', body: 'Eggs, flour, milk.', attachmentKey: slot('uploadKey') },
        ok: { status: 201, description: 'Created.', schema: ref('Note') },
      }),
    },
    '/api/notes/{id}': {
      get: operation({
        id: 'getNote',
        summary: 'Get one of the caller’s notes',
        tag: 'notes',
        auth: 'required',
        pathId: NOTE_ID,
        ok: { status: 200, description: 'The note.', schema: ref('Note') },
      }),
      put: operation({
        id: 'updateNote',
        summary: 'Change the title, body or attachmentKey of a note',
        description: 'A replaced attachment is deleted.',
        tag: 'notes',
        auth: 'required',
        pathId: NOTE_ID,
        body: ref('UpdateNote'),
        example: { body: 'Eggs, flour, milk, butter.' },
        ok: { status: 200, description: 'The updated note.', schema: ref('Note') },
        errors: ['Conflict'],
      }),
      delete: operation({
        id: 'deleteNote',
        summary: 'Delete one of the caller’s notes and its attachment',
        description: 'The attachment goes right after the note; 204 whether or not one was deleted.',
        tag: 'notes',
        auth: 'required',
        pathId: NOTE_ID,
        ok: { status: 204, description: 'Done.' },
        errors: ['Conflict'],
      }),
    },
    '/notes/{id}/attachment': {
      get: operation({
        id: 'noteAttachment',
        summary: 'Get a download link for the note’s attachment',
        description: `A signed download link (GET, 3600 s) for the note’s attachment.\n\n${alsoServedAt('/api/notes/{id}/attachment')}`,
        tag: 'notes',
        auth: 'required',
        pathId: NOTE_ID,
        ok: { status: 200, description: 'The link.', schema: ref('DownloadLink') },
      }),
    },
    '/api/upload-rules': {
      get: operation({
        id: 'uploadRules',
        summary: 'Get the rules an upload must meet',
        description: 'The allowed media types and the size limits.',
        tag: 'files',
        auth: 'none',
        ok: { status: 200, description: 'The rules every upload link is issued under.', schema: ref('UploadRules') },
      }),
    },
    '/upload-url': {
      post: operation({
        id: 'uploadUrl',
        summary: 'Get a signed link to upload one file with one PUT',
        description: `A signed link for one PUT of a file straight to storage, valid for 300 s.\n\n${alsoServedAt('/api/upload-url')}`,
        tag: 'files',
        auth: 'required',
        body: ref('UploadRequest'),
        example: { contentType: 'text/plain', filename: 'shopping-list.txt', size: EXAMPLE_FILE_BYTES },
        ok: {
          status: 200,
          description: 'The link, the key, and the exact headers to send with the PUT.',
          schema: ref('UploadLink'),
        },
      }),
    },
    '/api/multipart-uploads': {
      post: operation({
        id: 'createMultipartUpload',
        summary: 'Start uploading a large file in parts',
        description: `Start a file in parts (straight to storage). The answer says the part size to use and how many parts there are.\n\n${alsoServedAt('/multipart-uploads')}`,
        tag: 'files',
        auth: 'required',
        body: ref('MultipartRequest'),
        example: { contentType: 'application/zip', filename: 'photos.zip', size: EXAMPLE_LARGE_FILE_BYTES },
        ok: { status: 201, description: 'The upload.', schema: ref('MultipartUpload') },
      }),
    },
    '/api/multipart-uploads/{uploadId}': {
      get: operation({
        id: 'getMultipartUpload',
        summary: 'Get a multipart upload and the parts storage holds',
        description: `The upload and the parts storage already holds, to resume.\n\n${alsoServedAt('/multipart-uploads/{uploadId}')}`,
        tag: 'files',
        auth: 'required',
        uploadId: true,
        ok: { status: 200, description: 'The upload, with `parts`.', schema: ref('MultipartUpload') },
      }),
      delete: operation({
        id: 'abortMultipartUpload',
        summary: 'Abort a multipart upload',
        description: `Storage keeps none of its parts. 409 once it is attached to a note.\n\n${alsoServedAt('/multipart-uploads/{uploadId}')}`,
        tag: 'files',
        auth: 'required',
        uploadId: true,
        ok: { status: 204, description: 'Aborted (or already gone).' },
        errors: ['Conflict'],
      }),
    },
    '/api/multipart-uploads/{uploadId}/part-urls': {
      post: operation({
        id: 'signUploadParts',
        summary: 'Get signed PUT links for parts of an upload',
        description: `Each with its exact Content-Length signed in (valid 300 s).\n\n${alsoServedAt('/multipart-uploads/{uploadId}/part-urls')}`,
        tag: 'files',
        auth: 'required',
        uploadId: true,
        body: ref('PartNumbers'),
        example: { partNumbers: [1] },
        ok: { status: 200, description: 'A link per part.', schema: ref('PartLinks') },
        errors: ['Conflict'],
      }),
    },
    '/api/multipart-uploads/{uploadId}/complete': {
      post: operation({
        id: 'completeMultipartUpload',
        summary: 'Join the parts of an upload into one file',
        description: `Once storage holds exactly parts 1…partCount of their lengths; then attach the key to a note.\n\n${alsoServedAt('/multipart-uploads/{uploadId}/complete')}`,
        tag: 'files',
        auth: 'required',
        uploadId: true,
        ok: { status: 200, description: 'The object’s key and size.', schema: ref('CompletedUpload') },
        errors: ['Conflict'],
      }),
    },
    '/api/realtime': {
      get: {
        operationId: 'subscribe',
        summary: 'Stream the changes of posts and notes (Server-Sent Events)',
        description:
          'A stream of Server-Sent Events: the changes of the topics asked for, as they commit. Each event has an `id:`, an `event:` of the form `<topic>.upsert` (data: the document as GET answers it) or `<topic>.remove` (data: `{"_id"}`), and JSON `data:`. A comment line (`: keepalive`) comes every 10 s. Reconnect with `Last-Event-ID` to get every event after that one, in order, while it is within the retention window (15 minutes or 20,000 events by default); past it the first event is `reset` (data `{}`): reload the lists. When the token that opened a stream (or its ticket’s token) expires or is revoked, the stream sends `auth.expired` and ends: reconnect with a fresh token (or a fresh ticket) and `Last-Event-ID` (or `lastEventId`). A client that does not read what it is sent is cut off (its connection closed): reconnect with `Last-Event-ID`, and nothing is missed. An account holds at most 20 streams at once (past it 429 with `Retry-After`).',
        tags: ['realtime'],
        security: [{}, { bearerAuth: [] }],
        parameters: [
          {
            name: 'topics',
            in: 'query',
            required: true,
            description:
              'Comma-separated: `posts` (published posts; public), `my-posts` (the caller’s posts, drafts included) and `notes` (the caller’s notes). The last two need a caller: a Bearer token, or `ticket`.',
            schema: { type: 'string' },
            example: 'posts,my-posts,notes',
          },
          {
            name: 'tag',
            in: 'query',
            required: false,
            description: 'Only posts with this tag, on the `posts` topic.',
            schema: { type: 'string', pattern: TAG_PATTERN },
          },
          {
            name: 'ticket',
            in: 'query',
            required: false,
            description:
              'For `EventSource`, which cannot send headers: a ticket from `POST /api/realtime/ticket`. It must open its stream within 30 s; then it serves that stream’s reconnects (`EventSource` reconnects by itself with the same URL) until the access token it was issued for expires, and is refused within 5 s once that token is revoked or its session ends. An access token never goes into a URL.',
            schema: { type: 'string' },
          },
          {
            name: 'lastEventId',
            in: 'query',
            required: false,
            description:
              'As the `Last-Event-ID` header, for a new `EventSource`, which cannot send it (after `auth.expired`, say: a fresh ticket, and the id of the last event received). The header wins when both are given.',
            schema: { type: 'string' },
          },
          {
            name: 'Last-Event-ID',
            in: 'header',
            required: false,
            description: 'The id of the last event received: the stream resumes after it.',
            schema: { type: 'string' },
          },
        ],
        responses: {
          200: {
            description: 'The stream; it never ends on its own but for `auth.expired`.',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          400: { $ref: '#/components/responses/BadRequest' },
          401: failure(
            'A protected topic without a caller; an invalid or expired token; an unknown or expired ticket, or one whose token no longer works.',
            'Invalid or expired ticket',
          ),
          429: { $ref: '#/components/responses/TooManyRequests' },
          502: { $ref: '#/components/responses/BadGateway' },
          503: { $ref: '#/components/responses/Unavailable' },
          504: { $ref: '#/components/responses/GatewayTimeout' },
        },
      },
    },
    '/api/realtime/ticket': {
      post: operation({
        id: 'createRealtimeTicket',
        summary: 'Get a ticket for one event stream',
        description:
          'A ticket that names the caller on one stream (`GET /api/realtime?ticket=`): it must open the stream within 30 s (`expiresIn`), then serves that stream’s reconnects until the access token it was issued for expires; one stream at a time. For `EventSource`; a fetch-based client sends its Bearer token instead.',
        tag: 'realtime',
        auth: 'required',
        ok: { status: 201, description: 'The ticket.', schema: ref('RealtimeTicket') },
      }),
    },
    '/healthz': {
      get: {
        operationId: 'health',
        summary: 'Check that the gateway process is up',
        tags: ['health'],
        security: [],
        responses: { 200: response('Up.', ref('Health')) },
      },
    },
    '/readyz': {
      get: {
        operationId: 'ready',
        summary: 'Check that every service and its dependencies answer',
        description: 'Every service, and their databases and storage, answers (200), or one does not (503).',
        tags: ['health'],
        security: [],
        responses: { 200: response('Ready.', ref('Readiness')), 503: response('Not ready.', ref('Readiness')) },
      },
    },
  },
  components: {
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: 'HS256; the only custom claim is `id`.',
      },
    },
    schemas: {
      Credentials: s.credentialsSchema,
      Login: s.loginSchema,
      ChangePassword: s.changePasswordSchema,
      DeleteAccount: s.deleteAccountSchema,
      PasswordResetRequest: s.passwordResetRequestSchema,
      PasswordResetConfirm: s.passwordResetConfirmSchema,
      Accepted: s.acceptedSchema,
      CreatePost: s.createPostSchema,
      UpdatePost: s.updatePostSchema,
      PostTags: s.postTagsSchema,
      PatchPost: s.patchPostSchema,
      CreateNote: s.createNoteSchema,
      UpdateNote: s.updateNoteSchema,
      UploadRequest: s.uploadRequestSchema,
      UploadRules: s.uploadRulesSchema,
      UpdateMe: s.updateMeSchema,
      PublicUsers: s.publicUsersSchema,
      MultipartRequest: s.multipartRequestSchema,
      Error: s.errorSchema,
      ValidationErrors: s.validationErrorsSchema,
      SessionTokens: s.sessionTokensSchema,
      CookieSessionTokens: s.cookieSessionTokensSchema,
      RefreshToken: s.refreshTokenBodySchema,
      Logout: s.logoutBodySchema,
      Session: s.sessionSchema,
      SessionList: s.sessionListSchema,
      Me: s.meSchema,
      Post: s.postSchema,
      PostPage: s.postPageSchema,
      Note: s.noteSchema,
      UploadLink: s.uploadLinkSchema,
      PartNumbers: s.partNumbersSchema,
      MultipartUpload: s.multipartUploadSchema,
      PartLinks: s.partLinksSchema,
      CompletedUpload: s.completedUploadSchema,
      DownloadLink: s.downloadLinkSchema,
      RealtimeTicket: s.realtimeTicketSchema,
      Health: s.healthSchema,
      Readiness: s.readinessSchema,
    },
    responses: errorResponses,
  },
} as const;
