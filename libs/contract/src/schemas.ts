/**
 * The request and response bodies of the public API, as JSON Schema (2020-12, the dialect of
 * OpenAPI 3.1). The services validate request bodies with these very objects, and the OpenAPI
 * document is built from them, so the two cannot drift apart.
 */

export const OBJECT_ID_PATTERN = '^[0-9a-fA-F]{24}$';
export const TAG_PATTERN = '^[A-Za-z0-9-]{1,40}$';
/** The shape of an upload key; the files service decides whether it is really the caller's. */
export const UPLOAD_KEY_PATTERN = '^uploads/[A-Za-z0-9-]{1,64}\\.[a-z0-9]{1,16}$';

export const LIMITS = {
  postTitleMax: 200,
  postBodyMin: 10,
  postBodyMax: 50_000,
  postTagsMax: 10,
  noteTitleMax: 200,
  noteBodyMax: 100_000,
  filenameMax: 1024,
  /** The caller's notes, one page: the default size, and the largest a client may ask for. */
  notesPageDefault: 20,
  notesPageMax: 100,
  /**
   * The caller's posts, one page. Without `limit` the contract's list of every post is kept, up
   * to this many: a person with more gets the rest through the Link header.
   */
  myPostsPageMax: 100,
} as const;

/**
 * A text's length as JSON Schema's minLength and maxLength count it (and so the validation step
 * and every client generated from the document): in characters (Unicode code points), not in
 * UTF-16 units as String#length does. An emoji is one character and two units.
 */
export function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

const timestamp = { type: 'string', format: 'date-time' } as const;
const objectId = { type: 'string', pattern: OBJECT_ID_PATTERN } as const;

// ---------- request bodies ----------

export const credentialsSchema = {
  type: 'object',
  required: ['email', 'password'],
  properties: {
    email: {
      type: 'string',
      maxLength: 254,
      pattern: '^\\s*[^\\s@]+@[^\\s@]+\\s*$',
      description: 'Trimmed and lowercased before use; at most 254 characters; must look like an address.',
    },
    password: {
      type: 'string',
      minLength: 8,
      maxLength: 72,
      description: 'At least 8 characters and at most 72 bytes of UTF-8 (72 characters only when all are ASCII).',
    },
  },
} as const;

const newPassword = {
  type: 'string',
  minLength: 8,
  maxLength: 72,
  description: 'The rules of register: at least 8 characters and at most 72 bytes of UTF-8.',
} as const;

export const changePasswordSchema = {
  type: 'object',
  required: ['currentPassword', 'newPassword'],
  properties: { currentPassword: { type: 'string', minLength: 1 }, newPassword },
} as const;

export const deleteAccountSchema = {
  type: 'object',
  required: ['password'],
  properties: { password: { type: 'string', minLength: 1, description: 'The account’s current password.' } },
} as const;

export const passwordResetRequestSchema = {
  type: 'object',
  required: ['email'],
  properties: { email: credentialsSchema.properties.email },
} as const;

export const passwordResetConfirmSchema = {
  type: 'object',
  required: ['token', 'newPassword'],
  properties: {
    token: { type: 'string', minLength: 1, description: 'The token from the e-mail’s link.' },
    newPassword,
  },
} as const;

/** Trimmed length ≥ 1 and ≥ 10, as patterns, so the validation step can say it before the handler. */
export const createPostSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'body'],
  properties: {
    title: { type: 'string', pattern: '\\S', maxLength: LIMITS.postTitleMax },
    body: { type: 'string', pattern: '\\S[\\s\\S]{8,}\\S', maxLength: LIMITS.postBodyMax },
    tags: { type: 'array', maxItems: LIMITS.postTagsMax, items: { type: 'string', pattern: TAG_PATTERN } },
  },
} as const;

export const updatePostSchema = {
  type: 'object',
  description: 'At least one of title, body and status. Other fields are ignored, never written.',
  minProperties: 1,
  additionalProperties: false,
  properties: {
    title: { type: 'string', pattern: '\\S', maxLength: LIMITS.postTitleMax },
    body: { type: 'string', pattern: '\\S[\\s\\S]{8,}\\S', maxLength: LIMITS.postBodyMax },
    status: { type: 'string', enum: ['draft', 'published'] },
  },
} as const;

const noteProperties = {
  title: { type: 'string', pattern: '\\S', maxLength: LIMITS.noteTitleMax },
  body: { type: 'string', maxLength: LIMITS.noteBodyMax },
  attachmentKey: { type: ['string', 'null'], pattern: UPLOAD_KEY_PATTERN },
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
} as const;

export const uploadRequestSchema = {
  type: 'object',
  required: ['contentType', 'filename'],
  properties: {
    contentType: { type: 'string', description: 'A media type on the allowlist (UPLOAD_ALLOWED_TYPES).' },
    filename: {
      type: 'string',
      minLength: 1,
      maxLength: LIMITS.filenameMax,
      description: 'Only its extension is used.',
    },
    size: {
      type: 'integer',
      minimum: 1,
      description:
        'The file’s exact length in bytes, at most the upload limit (UPLOAD_MAX_BYTES for one PUT, UPLOAD_MAX_BYTES_MULTIPART in parts). Signed into the links: storage takes no other length. Optional for /upload-url (recommended; the contract’s request has none: the limit is then enforced after the upload), required for a multipart upload.',
    },
  },
} as const;

/** A multipart upload's id: the UUID in its key. */
export const UPLOAD_ID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

export const partNumbersSchema = {
  type: 'object',
  required: ['partNumbers'],
  properties: {
    partNumbers: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      items: { type: 'integer', minimum: 1, maximum: 10_000 },
      description: 'Parts to sign links for, each from 1 to the upload’s partCount.',
    },
  },
} as const;

// ---------- response bodies ----------

export const errorSchema = {
  type: 'object',
  required: ['error'],
  properties: { error: { type: 'string', minLength: 1 } },
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

export const tokenSchema = {
  type: 'object',
  required: ['token'],
  properties: { token: { type: 'string', pattern: '^[\\w-]+\\.[\\w-]+\\.[\\w-]+$' } },
  additionalProperties: false,
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
    status: { type: 'string', enum: ['draft', 'published'] },
    tags: { type: 'array', items: { type: 'string', pattern: '^[a-z0-9-]{1,40}$' } },
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
    posts: { type: 'array', maxItems: 50, items: { $ref: '#/components/schemas/Post' } },
    total: { type: 'integer', minimum: 0 },
    page: { type: 'integer', minimum: 1 },
    pages: { type: 'integer', minimum: 0 },
  },
  additionalProperties: false,
} as const;

export const noteSchema = {
  type: 'object',
  required: ['_id', 'title', 'body', 'attachmentKey', 'authorId', 'createdAt', 'updatedAt'],
  properties: {
    _id: objectId,
    title: { type: 'string' },
    body: { type: 'string' },
    attachmentKey: { anyOf: [{ type: 'string', pattern: UPLOAD_KEY_PATTERN }, { type: 'null' }] },
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

const uploadKey = { type: 'string', pattern: '^uploads/[0-9a-f-]{36}\\.[a-z0-9]{1,16}$' } as const;

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
    reason: { type: 'string', minLength: 1, maxLength: 500 },
  },
} as const;
