/** Files: what the routes of uploads and downloads take and answer. */
import { LIMITS, NOT_BLANK_PATTERN, UPLOAD_ID_PATTERN, UPLOAD_KEY_PATTERN } from '../limits';
import { fileMessages } from '../messages';
import { noNul } from './common';

// ---------- request bodies ----------

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

/** What the notes service sends to files for a thumbnail: the upload key, and the size asked for (files checks it against THUMB_SIZES). */
export const thumbnailLinkBodySchema = {
  type: 'object',
  required: ['key', 'size'],
  properties: {
    key: uploadKeyBodySchema.properties.key,
    size: { type: 'string', minLength: 1, maxLength: 16, 'x-messages': fileMessages.thumbSizeRequired },
  },
  'x-error': { status: 400 },
} as const;

// ---------- response bodies ----------

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
