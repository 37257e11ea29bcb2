/**
 * Turning what a client sent into what the domain accepts. Pure functions: no I/O. A body has met
 * its schema (`@cs/contract`) before it gets here; the query string's rules are these.
 */
import { readSearch, type SearchQuery } from '@cs/search';
import { AUTHOR_ID, POST_LIMITS, type PostSort, type PostStatus, SORTS, TAG } from './terms';

export interface ListQuery {
  page: number;
  limit: number;
  tag: string | undefined;
  /** Only this author's posts (an account id, lowercase). */
  author: string | undefined;
  sort: PostSort;
  /** The words searched for (`q`): the best matches first, and `sort` ignored. */
  search: SearchQuery | undefined;
}

/** A positive integer as written in a query string, else undefined. */
function positiveInteger(raw: unknown, max: number): number | undefined {
  if (typeof raw !== 'string' || !/^\d+$/.test(raw)) return undefined;
  const n = Number(raw);
  return n >= 1 && n <= max ? n : undefined;
}

/** A string that matches `pattern` (in any case), lowercased; else undefined, so it is ignored. */
function matching(raw: unknown, pattern: RegExp): string | undefined {
  return typeof raw === 'string' && pattern.test(raw) ? raw.toLowerCase() : undefined;
}

/**
 * page and limit fall back to their defaults; limit is capped at 50; a bad tag is ignored, and so,
 * in the same way, are a bad author and a bad sort (the contract's newest first stays). A `q` past
 * its bounds is 400 (`readSearch`).
 */
export function parseListQuery(query: Record<string, unknown>): ListQuery {
  const page = positiveInteger(query.page, POST_LIMITS.pageMax) ?? POST_LIMITS.pageDefault;
  const asked = positiveInteger(query.limit, Number.MAX_SAFE_INTEGER) ?? POST_LIMITS.limitDefault;
  const sort = matching(query.sort, SORTS) as PostSort | undefined;
  return {
    page,
    limit: Math.min(asked, POST_LIMITS.limitMax),
    tag: matching(query.tag, TAG),
    author: matching(query.author, AUTHOR_ID),
    sort: sort ?? 'newest',
    search: readSearch(query.q),
  };
}

export interface NewPost {
  title: string;
  body: string;
  tags: string[];
}

/** After the validation step: trims, and lowercases and deduplicates tags. */
export function toNewPost(body: Record<string, unknown>): NewPost {
  const tags = Array.isArray(body.tags) ? body.tags.map((t) => String(t).toLowerCase()) : [];
  return { title: String(body.title).trim(), body: String(body.body).trim(), tags: [...new Set(tags)] };
}

export interface PostChanges {
  title?: string;
  body?: string;
  status?: PostStatus;
  /** Only through `PUT /api/posts/:id/tags` and `PATCH /api/posts/:id`: the contract's PUT ignores tags. */
  tags?: string[];
}

/** PUT, after the validation step (which removed every other field): the texts trimmed. */
export function toPostChanges(body: Record<string, unknown>): PostChanges {
  const changes: PostChanges = {};
  if (typeof body.title === 'string') changes.title = body.title.trim();
  if (typeof body.body === 'string') changes.body = body.body.trim();
  if (body.status !== undefined) changes.status = body.status as PostStatus;
  return changes;
}

/** `PUT /api/posts/:id/tags`, after the validation step: lowercased and deduplicated. */
export function toTags(body: Record<string, unknown>): string[] {
  return [...new Set((body.tags as string[]).map((tag) => tag.toLowerCase()))];
}

/** `PATCH /api/posts/:id`, after the validation step: PUT's changes, and the tags when sent. */
export function toPostPatch(body: Record<string, unknown>): PostChanges {
  const changes = toPostChanges(body);
  if (body.tags !== undefined) changes.tags = toTags(body);
  return changes;
}
