/**
 * Generated from the live-update vocabulary in libs/contract (src/events.ts)
 * (npm run generate -w @content-service/client). Do not edit: CI fails when it is stale.
 */

/** The topics a stream may ask for. */
export const TOPICS = ['posts', 'my-posts', 'notes'] as const;
export type Topic = (typeof TOPICS)[number];

/** The topics of the caller's own documents: a stream of any of them needs the caller's token. */
export const PROTECTED_TOPICS: readonly Topic[] = ['my-posts', 'notes'];

/** The document each topic's upserts carry (as GET answers it), by its schema's name. */
export interface TopicDocumentNames {
  posts: 'Post';
  'my-posts': 'Post';
  notes: 'Note';
}

/** The events of a stream itself, of no topic. */
export const STREAM_EVENTS = {
  reset: 'reset',
  authExpired: 'auth.expired',
} as const;
