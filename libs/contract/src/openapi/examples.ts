/**
 * The examples of the document, and the order in which every one of them succeeds (info.description
 * lists it).
 */

/**
 * Values an earlier step of TRY_IT answered, written `<name>` in the examples: whoever tries the
 * sequence fills them in (gateway/test/openapi-examples.test.ts does, from the answers).
 */
export const PLACEHOLDERS = {
  refreshToken:
    'the `refreshToken` of the latest answer with a session (register, login, refresh, the password change)',
  userId: 'the `_id` that `GET /api/auth/me` answered',
  sessionId: 'the `id` of the last session `GET /api/auth/sessions` lists: the oldest, register’s',
  postId: 'the `_id` that `POST /api/posts` answered',
  uploadKey: 'the `key` that `POST /upload-url` answered',
  noteId: 'the `_id` that `POST /api/notes` answered',
  uploadId: 'the `uploadId` that `POST /api/multipart-uploads` answered',
  resetToken: 'the `token` in the link of the e-mail that `POST /api/auth/password-reset` sent',
  verificationToken:
    'the `token` in the link of the newest e-mail that verifies the address (register sends the first)',
  emailChangeToken: 'the `token` in the link of the e-mail that `POST /api/auth/email-change` sent to the new address',
} as const;

export const slot = (name: keyof typeof PLACEHOLDERS) => `<${name}>`;

/** The account of the examples: register's password, changed by the password change and set again by the reset. */
export const EXAMPLE_EMAIL = 'ada@example.com';
/** The address the account moves to (POST /api/auth/email-change), and deletes the account under. */
export const EXAMPLE_NEW_EMAIL = 'ada.lovelace@example.com';
export const EXAMPLE_PASSWORD = 'correct horse battery staple';
export const EXAMPLE_NEW_PASSWORD = 'a new passphrase, 2nd';
/** The file of the one-PUT upload (a short text), and the large one: one part at the default part size. */
export const EXAMPLE_FILE_BYTES = 12;
export const EXAMPLE_LARGE_FILE_BYTES = 6 * 1024 * 1024;

/**
 * Every operation, in an order in which each example succeeds: `METHOD /path`, or `PUT <url>` for a
 * request straight to storage with a link the step before answered. info.description lists it.
 */
export const TRY_IT: readonly (readonly [step: string, note?: string])[] = [
  ['GET /healthz'],
  ['GET /readyz'],
  ['GET /api/upload-rules'],
  ['POST /api/auth/register', 'the first session; set “Authorize” to its `token`'],
  ['POST /api/auth/login', 'a second session'],
  ['POST /api/auth/refresh', 'that session’s next pair'],
  ['GET /api/auth/me'],
  ['GET /api/auth/providers', 'the providers one may sign in with (none unless OIDC_PROVIDERS names some)'],
  ['GET /api/auth/identities', 'the providers linked to the account: none yet'],
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
  [
    'POST /api/auth/email-verification',
    'a new link (register sent the first); one mail a minute per account, so sooner than a minute after register it is 429: wait as Retry-After says',
  ],
  ['POST /api/auth/email-verification/confirm', 'the address is verified'],
  ['POST /api/auth/email-change', 'a link goes to the new address, a notice to the old one'],
  [
    'POST /api/auth/email-change/confirm',
    'with “Authorize” still set: the address is changed and its session stays, every other one ends',
  ],
  ['DELETE /api/auth/account', 'the account is gone, and the sequence can be tried again'],
];

export const TRY_IT_DESCRIPTION =
  `**Trying it out.** Every example in this document succeeds when the operations are tried in this order, on a system where neither ${EXAMPLE_EMAIL} nor ${EXAMPLE_NEW_EMAIL} has an account yet. ` +
  'Set “Authorize” to the `token` of the latest answer that has one (register, login, refresh, the password change). ' +
  'A value in angle brackets, such as `<postId>`, is one that an earlier step answered: fill it in.\n\n' +
  TRY_IT.map(([step, note], i) => `${i + 1}. \`${step}\`${note ? `: ${note}` : ''}`).join('\n') +
  '\n\nThe placeholders:\n\n' +
  Object.entries(PLACEHOLDERS)
    .map(([name, from]) => `- \`<${name}>\`: ${from}`)
    .join('\n');
