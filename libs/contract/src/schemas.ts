/**
 * The request and response bodies of the public API, as JSON Schema (2020-12, the dialect of
 * OpenAPI 3.1). The services validate request bodies and path parameters with these very objects
 * (`validateBody`, `validateParam` of `@cs/koa`), and the OpenAPI document is built from them, so
 * the two cannot drift apart.
 *
 * A request schema also says what a failure answers, in annotations the validation step reads
 * (the OpenAPI document carries them as extensions, which clients ignore):
 * - `x-messages`: the message of a failing rule, one string for every rule of that (sub)schema or
 *   one per keyword (`{pattern: …, default: …}`); the nearest one up the schema wins, and for a
 *   missing field its own schema's first;
 * - `x-error: {status}`: the route answers the contract's `{error: message}` with that status and
 *   the first failure, not the validation step's `400 {errors: [{field, message}]}`. Messages given
 *   on the root come first, in the order written (a missing field before a wrong type);
 * - `x-maxBytes`: a string's largest length in bytes of UTF-8.
 * No string a request sends may hold U+0000 (`noNul`): PostgreSQL refuses it in text (SQLSTATE
 * 22P05), so it is a 400 here and never reaches a database.
 * Where a schema says `additionalProperties: false`, unknown fields are removed before its rules
 * apply: `{tags: [...]}` is an update with no field (minProperties), not one with a field ignored.
 * A field sent as null or "" that breaks a rule counts as missing (the contract's "missing or empty").
 */
import { messages as httpMessages } from '@cs/errors';
import {
  DISPLAY_NAME_PATTERN,
  EMAIL_PATTERN,
  LIMITS,
  NOT_BLANK_PATTERN,
  OBJECT_ID_PATTERN,
  STORED_TAG_PATTERN,
  TAG_PATTERN,
  UPLOAD_ID_PATTERN,
  UPLOAD_KEY_PATTERN,
} from './limits';
import { credentialMessages, fileMessages, noteMessages, postMessages, requestMessages } from './messages';

const timestamp = { type: 'string', format: 'date-time' } as const;

/** Keywords that say what a value is for, not a rule it must meet. */
const ANNOTATIONS = new Set(['description', 'x-messages', 'x-error', 'default', 'examples']);

/**
 * A string field that refuses U+0000, told so in its own words. A field whose one message served
 * every rule keeps it for every rule it has (and for a missing or wrongly typed value).
 */
function noNul<F extends Record<string, unknown>>(name: string, field: F) {
  const given = field['x-messages'] as string | Readonly<Record<string, string>> | undefined;
  const rules = ['required', 'type', ...Object.keys(field).filter((k) => !ANNOTATIONS.has(k))];
  const messages =
    typeof given === 'string' ? { ...Object.fromEntries(rules.map((k) => [k, given])), default: given } : given;
  return {
    ...field,
    // A string that holds U+0000; anything else is left to the field's other rules.
    not: { type: 'string', pattern: '\\u0000' },
    'x-messages': { ...messages, not: requestMessages.nul(name) },
  };
}
const objectId = { type: 'string', pattern: OBJECT_ID_PATTERN } as const;

/** The root annotations of a route that answers `{error}`: `required` and `type` are its two messages. */
function answersError(required: string, notStrings: string) {
  return { 'x-error': { status: 400 }, 'x-messages': { required, type: notStrings } } as const;
}

// ---------- path parameters ----------

export const objectIdParamSchema = {
  type: 'string',
  pattern: OBJECT_ID_PATTERN,
  'x-error': { status: 400 },
  'x-messages': httpMessages.invalidId,
} as const;

/** Anything that cannot be an upload's id is the same 404 as an unknown one. */
export const uploadIdParamSchema = {
  type: 'string',
  pattern: UPLOAD_ID_PATTERN,
  'x-error': { status: 404 },
  'x-messages': fileMessages.uploadNotFound,
} as const;

// ---------- request bodies ----------

const emailAddress = noNul('email', {
  type: 'string',
  maxLength: LIMITS.emailMax,
  pattern: EMAIL_PATTERN,
  description: `Trimmed and lowercased before use; at most ${LIMITS.emailMax} characters; must look like an address, with no control or invisible formatting characters.`,
  'x-messages': { maxLength: credentialMessages.badEmail, pattern: credentialMessages.badEmail },
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

export const POST_STATUSES = ['draft', 'published'] as const;
/**
 * The orders of the public list (`sort`): newest first (the contract's, the default), oldest
 * first, or by title, case-folded, A to Z.
 */
export const POST_SORTS = ['newest', 'oldest', 'title'] as const;

/** Trimmed length ≥ 1 and ≥ 10, as patterns, so the validation step can say it before the handler. */
const postTitle = { type: 'string', pattern: NOT_BLANK_PATTERN, maxLength: LIMITS.postTitleMax } as const;
const postBody = {
  type: 'string',
  pattern: `\\S[\\s\\S]{${LIMITS.postBodyMin - 2},}\\S`,
  maxLength: LIMITS.postBodyMax,
} as const;

/** The contract's validation step: `400 {errors: [{field, message}]}`. */
export const createPostSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'body'],
  properties: {
    title: noNul('title', {
      ...postTitle,
      'x-messages': { maxLength: postMessages.titleTooLong, default: postMessages.titleRequired },
    }),
    body: noNul('body', {
      ...postBody,
      'x-messages': { maxLength: postMessages.bodyTooLong, default: postMessages.bodyTooShort },
    }),
    tags: {
      type: 'array',
      maxItems: LIMITS.postTagsMax,
      items: { type: 'string', pattern: TAG_PATTERN },
      'x-messages': postMessages.tagsInvalid,
    },
  },
} as const;

/** Every tag of a post, as one list that replaces the ones it had: `[]` removes every one. */
const postTagList = {
  type: 'array',
  maxItems: LIMITS.postTagsMax,
  items: { type: 'string', pattern: TAG_PATTERN },
  description: `At most ${LIMITS.postTagsMax} tags of 1 to ${LIMITS.tagMax} letters, digits or hyphens; lowercased, duplicates dropped.`,
  'x-messages': postMessages.tagsInvalid,
} as const;

/** A post's tags, all of them at once (the contract's PUT ignores tags): `[]` removes every one. */
export const postTagsSchema = {
  type: 'object',
  required: ['tags'],
  additionalProperties: false,
  properties: { tags: postTagList },
} as const;

/** The contract's update: `400 {error}`, an unknown status before a text's rules. */
export const updatePostSchema = {
  type: 'object',
  description: 'At least one of title, body and status. Other fields are ignored, never written.',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    status: { type: 'string', enum: POST_STATUSES, 'x-messages': postMessages.invalidStatus },
    title: noNul('title', {
      ...postTitle,
      'x-messages': {
        type: postMessages.titleNotString,
        pattern: postMessages.titleRequired,
        maxLength: postMessages.titleTooLong,
      },
    }),
    body: noNul('body', {
      ...postBody,
      'x-messages': {
        type: postMessages.bodyNotString,
        pattern: postMessages.bodyTooShort,
        maxLength: postMessages.bodyTooLong,
      },
    }),
  },
  'x-error': { status: 400 },
  'x-messages': { minProperties: postMessages.noSupportedFields },
} as const;

/**
 * Ours: any of title, body, status and tags, applied together in one write or not at all. The
 * rules of each field are the contract's update's and the tags route's, and so are the answers
 * (`400 {error, errors}`, an unknown status first); unknown fields are ignored, as PUT ignores them.
 */
export const patchPostSchema = {
  type: 'object',
  description:
    'At least one of title, body, status and tags, all applied in one write, or none when one breaks a rule. Other fields are ignored, never written.',
  additionalProperties: false,
  minProperties: 1,
  properties: { ...updatePostSchema.properties, tags: postTagList },
  'x-error': { status: 400 },
  'x-messages': { minProperties: postMessages.noPatchFields },
} as const;

const noteProperties = {
  title: noNul('title', {
    type: 'string',
    pattern: NOT_BLANK_PATTERN,
    maxLength: LIMITS.noteTitleMax,
    'x-messages': noteMessages.titleRequired,
  }),
  body: noNul('body', { type: 'string', maxLength: LIMITS.noteBodyMax, 'x-messages': noteMessages.bodyInvalid }),
  attachmentKey: {
    type: ['string', 'null'],
    pattern: UPLOAD_KEY_PATTERN,
    'x-messages': noteMessages.attachmentKeyInvalid,
  },
} as const;

export const createNoteSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['title'],
  properties: noteProperties,
} as const;

export const updateNoteSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'At least one of title, body and attachmentKey.',
  minProperties: 1,
  properties: noteProperties,
  'x-messages': { minProperties: noteMessages.noSupportedFields },
} as const;

const uploadProperties = {
  contentType: noNul('contentType', {
    type: 'string',
    pattern: NOT_BLANK_PATTERN,
    description: 'A media type on the allowlist (UPLOAD_ALLOWED_TYPES).',
    'x-messages': fileMessages.contentTypeAndFilenameRequired,
  }),
  filename: noNul('filename', {
    type: 'string',
    minLength: 1,
    maxLength: LIMITS.filenameMax,
    description:
      'The file’s name: the download saves it under this name (its last path segment, without control characters, cut to 255 bytes of UTF-8), and the key takes its extension.',
    'x-messages': { maxLength: fileMessages.filenameTooLong, default: fileMessages.contentTypeAndFilenameRequired },
  }),
  size: {
    type: 'integer',
    minimum: 1,
    description:
      'The file’s exact length in bytes, at most the upload limit (UPLOAD_MAX_BYTES for one PUT, UPLOAD_MAX_BYTES_MULTIPART in parts). Signed into the links: storage takes no other length.',
    'x-messages': fileMessages.badSize,
  },
} as const;

export const uploadRequestSchema = {
  type: 'object',
  description:
    '`size` is optional, as in the contract’s request, and recommended: with it the exact length is signed into the link; without it the limit is enforced after the upload.',
  required: ['contentType', 'filename'],
  properties: uploadProperties,
  'x-error': { status: 400 },
} as const;

export const multipartRequestSchema = {
  ...uploadRequestSchema,
  description: 'A large file in parts: `size` is required, since the parts are cut from it.',
  required: [...uploadRequestSchema.required, 'size'],
} as const;

export const partNumbersSchema = {
  type: 'object',
  required: ['partNumbers'],
  properties: {
    partNumbers: {
      type: 'array',
      minItems: 1,
      maxItems: LIMITS.partsPerSigning,
      items: { type: 'integer', minimum: 1, maximum: LIMITS.partsMax },
      description: 'Parts to sign links for, each from 1 to the upload’s partCount.',
      'x-messages': fileMessages.badPartNumbers,
    },
  },
  'x-error': { status: 400 },
} as const;

/** What the notes service sends to files (never routed by the gateway): one of the caller's upload keys. */
export const uploadKeyBodySchema = {
  type: 'object',
  required: ['key'],
  properties: { key: { type: 'string', pattern: UPLOAD_KEY_PATTERN, 'x-messages': fileMessages.keyRequired } },
  'x-error': { status: 400 },
} as const;

// ---------- response bodies ----------

export const errorSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: { type: 'string', minLength: 1 },
    errors: {
      description:
        'On a request body that broke rules: every field’s failure, one entry a field (`error` is the first).',
      type: 'array',
      items: {
        type: 'object',
        required: ['field', 'message'],
        properties: { field: { type: 'string' }, message: { type: 'string' } },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

export const validationErrorsSchema = {
  type: 'object',
  required: ['errors'],
  properties: {
    errors: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['field', 'message'],
        properties: { field: { type: 'string' }, message: { type: 'string', minLength: 1 } },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

/**
 * A session's tokens: the access token (the contract's JWT), the refresh token that gets the next
 * pair, and the access token's lifetime in seconds.
 */
export const sessionTokensSchema = {
  type: 'object',
  required: ['token', 'refreshToken', 'expiresIn'],
  properties: {
    token: { type: 'string', pattern: '^[\\w-]+\\.[\\w-]+\\.[\\w-]+$', description: 'The contract’s JWT.' },
    refreshToken: {
      type: 'string',
      pattern: '^[\\w-]{104}$',
      description: 'Opaque to clients (signed by the server, with 256 random bits); never a JWT.',
    },
    expiresIn: { type: 'integer', minimum: 1, description: 'The access token’s lifetime, in seconds.' },
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
  required: ['_id', 'email', 'displayName', 'createdAt'],
  properties: {
    _id: objectId,
    email: { type: 'string' },
    displayName: { type: ['string', 'null'], description: 'The name others see; null when none was given.' },
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

export const postSchema = {
  type: 'object',
  required: ['_id', 'title', 'body', 'authorId', 'status', 'tags', 'publishedAt', 'createdAt', 'updatedAt'],
  properties: {
    _id: objectId,
    title: { type: 'string' },
    body: { type: 'string' },
    authorId: objectId,
    status: { type: 'string', enum: POST_STATUSES },
    tags: { type: 'array', items: { type: 'string', pattern: STORED_TAG_PATTERN } },
    publishedAt: { anyOf: [timestamp, { type: 'null' }] },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
  additionalProperties: false,
} as const;

export const postPageSchema = {
  type: 'object',
  required: ['posts', 'total', 'page', 'pages'],
  properties: {
    posts: { type: 'array', maxItems: LIMITS.postsPageMax, items: { $ref: '#/components/schemas/Post' } },
    total: { type: 'integer', minimum: 0 },
    page: { type: 'integer', minimum: 1 },
    pages: { type: 'integer', minimum: 0 },
  },
  additionalProperties: false,
} as const;

export const noteSchema = {
  type: 'object',
  required: ['_id', 'title', 'body', 'attachmentKey', 'attachment', 'authorId', 'createdAt', 'updatedAt'],
  properties: {
    _id: objectId,
    title: { type: 'string' },
    body: { type: 'string' },
    attachmentKey: { anyOf: [{ type: 'string', pattern: UPLOAD_KEY_PATTERN }, { type: 'null' }] },
    attachment: {
      description:
        'The file `attachmentKey` holds, as it was uploaded: its name (the upload request’s `filename`, made safe: its last path segment, without control characters, at most 255 bytes of UTF-8), its size in bytes and its media type. The download link saves it under that name. Null without an attachment, and on notes whose attachment was claimed before names were kept.',
      anyOf: [
        {
          type: 'object',
          required: ['filename', 'size', 'contentType'],
          properties: {
            filename: { type: 'string', minLength: 1 },
            size: { type: 'integer', minimum: 0 },
            contentType: { type: 'string' },
          },
          additionalProperties: false,
        },
        { type: 'null' },
      ],
    },
    attachmentRemoved: {
      type: 'object',
      description:
        'Present when the files service removed the note’s attachment: its object broke an upload rule after the claim (replaced through a link without `size` by one over the limit or of another type).',
      required: ['key', 'reason', 'at'],
      properties: { key: { type: 'string' }, reason: { type: 'string' }, at: timestamp },
      additionalProperties: false,
    },
    authorId: objectId,
    createdAt: timestamp,
    updatedAt: timestamp,
  },
  additionalProperties: false,
} as const;

export const uploadRulesSchema = {
  type: 'object',
  required: ['allowedTypes', 'maxBytes', 'maxBytesMultipart'],
  properties: {
    allowedTypes: {
      type: 'array',
      items: { type: 'string' },
      description: 'The media types an upload may have (UPLOAD_ALLOWED_TYPES): `contentType` must be one of them.',
    },
    maxBytes: { type: 'integer', minimum: 1, description: 'The largest file sent in one PUT (`/upload-url`).' },
    maxBytesMultipart: {
      type: 'integer',
      minimum: 1,
      description: 'The largest file sent in parts (`/multipart-uploads`).',
    },
  },
  additionalProperties: false,
} as const;

const uploadKey = { type: 'string', pattern: UPLOAD_KEY_PATTERN } as const;

export const uploadLinkSchema = {
  type: 'object',
  required: ['url', 'key', 'headers', 'expiresIn'],
  properties: {
    url: { type: 'string', format: 'uri' },
    key: uploadKey,
    headers: {
      type: 'object',
      description:
        'Exactly the headers the PUT must carry. Without `size` in the request, only Content-Type (the contract’s link); with it, all five.',
      required: ['Content-Type'],
      properties: {
        'Content-Type': { type: 'string' },
        'Content-Length': { type: 'string', pattern: '^[1-9][0-9]*$' },
        'If-None-Match': { const: '*', description: 'The link only creates the object: a second PUT gets 412.' },
        'x-amz-meta-owner': { type: 'string', description: 'Signed in: the object says whose it is.' },
        'x-amz-meta-size': { type: 'string', pattern: '^[1-9][0-9]*$', description: 'Signed in: the declared size.' },
        'x-amz-meta-filename': {
          type: 'string',
          description: 'Signed in: the name the file is downloaded under, percent-encoded (S3 metadata is ASCII).',
        },
      },
      additionalProperties: false,
    },
    expiresIn: { type: 'integer', minimum: 1 },
  },
  additionalProperties: false,
} as const;

export const multipartUploadSchema = {
  type: 'object',
  required: ['uploadId', 'key', 'size', 'partSize', 'partCount', 'completed'],
  properties: {
    uploadId: { type: 'string', pattern: UPLOAD_ID_PATTERN },
    key: uploadKey,
    size: { type: 'integer', minimum: 1 },
    partSize: {
      type: 'integer',
      minimum: 5 * 1024 * 1024,
      description: 'Every part but the last is exactly this long.',
    },
    partCount: { type: 'integer', minimum: 1, maximum: 10_000 },
    completed: { type: 'boolean' },
    parts: {
      type: 'array',
      description: 'The parts storage holds (on GET, while not completed): send only the others.',
      items: {
        type: 'object',
        required: ['partNumber', 'size'],
        properties: { partNumber: { type: 'integer', minimum: 1 }, size: { type: 'integer', minimum: 0 } },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

export const partLinksSchema = {
  type: 'object',
  required: ['parts', 'expiresIn'],
  properties: {
    parts: {
      type: 'array',
      items: {
        type: 'object',
        required: ['partNumber', 'url', 'headers'],
        properties: {
          partNumber: { type: 'integer', minimum: 1 },
          url: { type: 'string', format: 'uri' },
          headers: {
            type: 'object',
            required: ['Content-Length'],
            properties: { 'Content-Length': { type: 'string', pattern: '^[1-9][0-9]*$' } },
            additionalProperties: false,
          },
        },
        additionalProperties: false,
      },
    },
    expiresIn: { type: 'integer', minimum: 1 },
  },
  additionalProperties: false,
} as const;

export const completedUploadSchema = {
  type: 'object',
  required: ['key', 'size'],
  properties: { key: uploadKey, size: { type: 'integer', minimum: 1 } },
  additionalProperties: false,
} as const;

export const downloadLinkSchema = {
  type: 'object',
  required: ['url', 'expiresIn'],
  properties: { url: { type: 'string', format: 'uri' }, expiresIn: { type: 'integer', minimum: 1 } },
  additionalProperties: false,
} as const;

/** A ticket that names its caller on one stream (`?ticket=`) and its reconnects, for EventSource. */
export const realtimeTicketSchema = {
  type: 'object',
  required: ['ticket', 'expiresIn'],
  properties: { ticket: { type: 'string', minLength: 1 }, expiresIn: { type: 'integer', minimum: 1 } },
  additionalProperties: false,
} as const;

export const healthSchema = {
  type: 'object',
  required: ['status'],
  properties: { status: { const: 'ok' } },
  additionalProperties: false,
} as const;

export const readinessSchema = {
  type: 'object',
  properties: {
    status: { const: 'ready' },
    error: { type: 'string' },
    services: { type: 'object', additionalProperties: { type: 'boolean' } },
    checks: { type: 'object', additionalProperties: { enum: ['ok', 'failing'] } },
    notices: {
      type: 'object',
      description:
        'What an operator should know while the gateway still serves: `tokens`, when the revocation feed has been away long enough to matter.',
      additionalProperties: { type: 'string' },
    },
  },
  additionalProperties: false,
} as const;

// ---------- internal request bodies (between services; never routed by the gateway) ----------

/** Files tells notes that it removed the object of a claimed key: it broke an upload rule. */
export const attachmentRemovedSchema = {
  type: 'object',
  required: ['key', 'reason'],
  properties: {
    key: { type: 'string', pattern: UPLOAD_KEY_PATTERN },
    reason: noNul('reason', { type: 'string', minLength: 1, maxLength: 500 }),
  },
} as const;
