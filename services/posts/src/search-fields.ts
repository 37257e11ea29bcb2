/**
 * What a search of posts reads of a post, and how much each part counts: the same for the public
 * list (listing-search.ts) and for a person's own posts (`searchMine`).
 */
import type { PostRecord } from './model';

export const POST_SEARCH = {
  /** A match in the title counts twice one in the body; in a tag, one and a half. */
  boosts: { title: 2, tags: 1.5, body: 1 },
  texts: (record: Pick<PostRecord, 'title' | 'body' | 'tags'>) => ({
    title: record.title,
    body: record.body,
    tags: record.tags.join(' '),
  }),
} as const;
