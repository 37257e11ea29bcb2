/** Posts: what their routes take and answer. */
import { LIMITS, NOT_BLANK_PATTERN, STORED_TAG_PATTERN, TAG_PATTERN } from '../limits';
import { postMessages } from '../messages';
import { noNul, objectId, timestamp } from './common';

// ---------- request bodies ----------

export const POST_STATUSES = ['draft', 'published'] as const;
/**
 * The orders of the public list (`sort`): newest first (the contract's, the default), oldest
 * first, or by title, case-folded, A to Z.
 */
export const POST_SORTS = ['newest', 'oldest', 'title'] as const;

/**
 * Trimmed length ≥ 1 and ≥ 10, as patterns, so the validation step can say it before the handler.
 * `[\s\S]` is any character, whatever an engine takes `\s` for.
 */
const postTitle = { type: 'string', pattern: NOT_BLANK_PATTERN, maxLength: LIMITS.postTitleMax } as const;
const postBody = {
  type: 'string',
  pattern: `${NOT_BLANK_PATTERN}[\\s\\S]{${LIMITS.postBodyMin - 2},}${NOT_BLANK_PATTERN}`,
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

// ---------- response bodies ----------

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
