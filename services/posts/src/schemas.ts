/**
 * The posts resource's rules, as data: the contract's messages and the list query's limits. The
 * validation step's schema is the OpenAPI document's own (`@cs/contract`), so they cannot drift.
 */
import { createPostSchema, LIMITS, TAG_PATTERN } from '@cs/contract';

export { createPostSchema, TAG_PATTERN };
export const STATUSES = ['draft', 'published'] as const;
export type PostStatus = (typeof STATUSES)[number];

export const POST_LIMITS = {
  titleMax: LIMITS.postTitleMax,
  bodyMin: LIMITS.postBodyMin,
  bodyMax: LIMITS.postBodyMax,
  tagsMax: LIMITS.postTagsMax,
  pageDefault: 1,
  limitDefault: 20,
  limitMax: 50,
  /** Far past any real page; larger numbers are treated as not a page at all. */
  pageMax: 1_000_000_000,
} as const;

/** A tag as a client may send it; it is lowercased before use. */
export const TAG = new RegExp(TAG_PATTERN);

export const messages = {
  titleRequired: 'title is required',
  titleTooLong: `title must be at most ${POST_LIMITS.titleMax} characters`,
  bodyTooShort: `body must be at least ${POST_LIMITS.bodyMin} characters`,
  bodyTooLong: `body must be at most ${POST_LIMITS.bodyMax} characters`,
  tagsInvalid: `tags must be a list of at most ${POST_LIMITS.tagsMax} tags of 1 to 40 letters, digits or hyphens`,
  noSupportedFields: 'No supported fields to update (title, body, status)',
  invalidStatus: 'Invalid status: must be draft or published',
  notFound: 'Post not found',
  alreadyPublished: 'Post is already published',
  concurrentChange: 'The post changed at the same time; try again',
  fetchFailed: 'Failed to fetch posts',
  fetchOneFailed: 'Failed to fetch post',
  createFailed: 'Failed to create post',
  updateFailed: 'Failed to update post',
  deleteFailed: 'Failed to delete post',
} as const;

export const createPostMessages = {
  title: { default: messages.titleRequired, maxLength: messages.titleTooLong },
  body: { default: messages.bodyTooShort, maxLength: messages.bodyTooLong },
  tags: messages.tagsInvalid,
} as const;
