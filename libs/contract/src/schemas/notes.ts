/** Notes: what their routes take and answer, and what files tells notes of an attachment. */
import { LIMITS, NOT_BLANK_PATTERN, UPLOAD_KEY_PATTERN } from '../limits';
import { noteMessages } from '../messages';
import { noNul, objectId, timestamp } from './common';

// ---------- request bodies ----------

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

// ---------- response bodies ----------

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
