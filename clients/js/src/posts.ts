/** Posts: the public list and a post, and the signed-in person's own, written and changed. */
import type { Calls, Raw } from './calls.js';
import type { components, operations } from './schema.js';

type Schemas = components['schemas'];
export type Post = Schemas['Post'];
export type PostPage = Schemas['PostPage'];
export type NewPost = Schemas['CreatePost'];
/** The contract's PUT: title, body, status. It ignores tags, so this type takes none (see PostPatch). */
export type PostChanges = Schemas['UpdatePost'] & { tags?: never };
/** Any of title, body, status and tags, applied together in one write (PATCH). */
export type PostPatch = Schemas['PatchPost'];
/** What the public list takes: a page, a tag, an author's id, an order, a search. */
type ListPostsQuery = NonNullable<operations['listPosts']['parameters']['query']>;
/** The orders of the public list: `newest` (the default), `oldest`, `title` (case-folded, A to Z). */
export type PostSort = NonNullable<ListPostsQuery['sort']>;
export interface ListPostsOptions {
  page?: number;
  limit?: number;
  tag?: string;
  /** Only this account's published posts (a post's `authorId`). */
  author?: string;
  sort?: PostSort;
  /**
   * Only the posts that match these words, best matches first (`sort` is then ignored): case and
   * diacritics folded, the last word also as a prefix, one typo forgiven in a word of 5 letters or
   * more, a "quoted phrase" word for word. At most 200 characters and 10 words (else an ApiError
   * 400); empty is no search.
   */
  q?: string;
}

/** What the caller's own posts take: a search (as the public list's `q`), and where a page starts. */
export interface MyPostsOptions {
  q?: string;
  /** The `next` of the page before: give the same `q` with it. */
  cursor?: string;
}

export function postCalls(raw: Raw, run: Calls['run'], page: Calls['page']) {
  return {
    /** Published posts, a page at a time: of a tag, of an author, or both, newest first unless `sort` says otherwise. */
    list: (query: ListPostsOptions = {}) =>
      run(() =>
        raw.GET('/api/posts', {
          params: {
            query: {
              ...(query.page ? { page: String(query.page) } : {}),
              ...(query.limit ? { limit: String(query.limit) } : {}),
              ...(query.tag ? { tag: query.tag } : {}),
              ...(query.author ? { author: query.author } : {}),
              ...(query.sort ? { sort: query.sort } : {}),
              ...(query.q ? { q: query.q } : {}),
            } satisfies ListPostsQuery,
          },
        }),
      ),
    get: (id: string) => run(() => raw.GET('/api/posts/{id}', { params: { path: { id } } })),
    /** The caller's posts, drafts included, a page (of up to 100) at a time: a cursor alone, or with a search. */
    mine: (query: string | MyPostsOptions = {}) => {
      const { q, cursor } = typeof query === 'string' ? ({ cursor: query } as MyPostsOptions) : query;
      return page(() =>
        raw.GET('/api/posts/my-posts', { params: { query: { ...(q ? { q } : {}), ...(cursor ? { cursor } : {}) } } }),
      );
    },
    create: (post: NewPost) => run(() => raw.POST('/api/posts', { body: post })),
    /** Changes the title, body or status (the contract's PUT, which ignores tags: see `patch`). */
    update: (id: string, changes: PostChanges) =>
      run(() => raw.PUT('/api/posts/{id}', { params: { path: { id } }, body: changes })),
    /**
     * Changes any of the title, body, status and tags in one request: all of them are applied,
     * or none when one breaks a rule (an ApiError 400).
     */
    patch: (id: string, changes: PostPatch) =>
      run(() => raw.PATCH('/api/posts/{id}', { params: { path: { id } }, body: changes })),
    remove: (id: string) => run(() => raw.DELETE('/api/posts/{id}', { params: { path: { id } } })),
    /** Replaces the post's tags, all at once (`update` cannot change them; `patch` can, with the rest). */
    setTags: (id: string, tags: string[]) =>
      run(() => raw.PUT('/api/posts/{id}/tags', { params: { path: { id } }, body: { tags } })),
  };
}
