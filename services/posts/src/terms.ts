/**
 * The posts resource's terms: its statuses, the list query's limits, the tag pattern and the
 * messages. The request schemas, their limits and their messages are the OpenAPI document's own
 * (`@cs/contract`), so they cannot drift.
 */
import { LIMITS, OBJECT_ID_PATTERN, POST_SORTS, POST_STATUSES, postMessages, TAG_PATTERN } from '@cs/contract';

export const STATUSES = POST_STATUSES;
export type PostStatus = (typeof STATUSES)[number];

export const POST_LIMITS = {
  pageDefault: 1,
  limitDefault: LIMITS.postsPageDefault,
  limitMax: LIMITS.postsPageMax,
  /** Far past any real page; larger numbers are treated as not a page at all. */
  pageMax: 1_000_000_000,
} as const;

/** A tag as a client may send it; it is lowercased before use. */
export const TAG = new RegExp(TAG_PATTERN);
/** An author's id as a client may send it (either case); it is lowercased before use. */
export const AUTHOR_ID = new RegExp(OBJECT_ID_PATTERN);

export type PostSort = (typeof POST_SORTS)[number];
/** A list order as a client may send it, in any case, as a tag may be. */
export const SORTS = new RegExp(`^(?:${POST_SORTS.join('|')})$`, 'i');

export const messages = {
  ...postMessages,
  notFound: 'Post not found',
  alreadyPublished: 'Post is already published',
  concurrentChange: 'The post changed at the same time; try again',
  fetchFailed: 'Failed to fetch posts',
  fetchOneFailed: 'Failed to fetch post',
  createFailed: 'Failed to create post',
  updateFailed: 'Failed to update post',
  deleteFailed: 'Failed to delete post',
} as const;
