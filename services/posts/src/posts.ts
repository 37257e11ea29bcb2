/**
 * The posts domain: every operation the routes call, and the internal publish operation. Returns
 * plain `Post` objects; mongoose documents never leave this module. Every update of a post is its
 * next version, taken as a turn (`@cs/mongo` turns), so a draft is published once, with one
 * publishedAt, however many requests race for it, on FerretDB as on MongoDB.
 *
 * Pages of the public list are kept between changes to published posts (page-cache.ts): every
 * operation that can change what the list shows says so before it returns.
 */
import { HttpError } from '@cs/errors';
import type { Bulkhead, PageQuery } from '@cs/koa';
import { type Cursor, findPage, NEWEST_FIRST, type Page, type Turns } from '@cs/mongo';
import type { QueryFilter } from 'mongoose';
import { POST_FIELDS, type Post, type PostModel, type PostRecord, toPost } from './model';
import type { PageCache } from './page-cache';
import type { ListQuery, NewPost, PostChanges } from './post-input';
import { messages, POST_LIMITS } from './schemas';

export interface PostPage {
  posts: Post[];
  total: number;
  page: number;
  pages: number;
}

function notFound(): HttpError {
  return new HttpError(404, messages.notFound);
}

function alreadyPublished(): HttpError {
  return new HttpError(409, messages.alreadyPublished);
}

function concurrentChange(): HttpError {
  return new HttpError(409, messages.concurrentChange);
}

/**
 * What the public list keeps (page-cache.ts): the count of a tag's published posts, and blocks of
 * BLOCK posts in list order. Every (page, limit) is cut from one or two blocks, so however a
 * client varies them, at most ceil(total / BLOCK) + 1 computations per tag can be cold, and a
 * page past the end costs the count alone.
 */
export type ListPiece = number | Post[];
export const BLOCK = POST_LIMITS.limitMax;

/** What a kept piece costs in memory, roughly: the characters of its posts' text. */
export function pieceSize(piece: ListPiece): number {
  if (typeof piece === 'number') return 1;
  let chars = 0;
  for (const post of piece) chars += post.title.length + post.body.length;
  return chars;
}

/**
 * `coldLists`: the bulkhead every list computation that is not kept runs in, taking turns per
 * client, so one client asking for pages no one else reads delays others by one computation each.
 */
export function createPosts(posts: PostModel, turns: Turns, pages: PageCache<ListPiece>, coldLists: Bulkhead) {
  /**
   * One write to the author's post, in its turn; anyone else's post is as good as missing.
   * `check` refuses before the turn is taken.
   */
  function writePost(
    id: string,
    authorId: string,
    change: (current: PostRecord) => Partial<PostRecord>,
    check?: (current: PostRecord) => void,
  ): Promise<Post> {
    return turns.writeInTurn(`post:${id}`, {
      read: () => posts.findOne({ _id: id, authorId }).lean<PostRecord>(),
      check,
      async write(current, version) {
        // No projection: FerretDB does not implement it on findAndModify, and the schema is strict.
        const record = await posts
          .findOneAndUpdate(
            { _id: id, version: current.version ?? null },
            { $set: { ...change(current), version } },
            { returnDocument: 'after' },
          )
          .lean<PostRecord>();
        return record ? toPost(record) : null;
      },
      missing: notFound,
      busy: concurrentChange,
    });
  }

  return {
    /**
     * Published posts, newest first, with the tag filter when given: cut from the kept count and
     * blocks (see ListPiece). The first block is computed beside the count; a later one only once
     * the count says the page has posts. `client` is whose turn a cold computation takes.
     */
    async listPublished({ page, limit, tag }: ListQuery, client: string): Promise<PostPage> {
      const filter: QueryFilter<PostRecord> =
        tag === undefined ? { status: 'published' } : { status: 'published', tags: tag };
      const view = await pages.view();
      const cold =
        <T extends ListPiece>(work: () => Promise<T>) =>
        () =>
          coldLists.run(client, work);
      const count = () =>
        view.get(
          `${tag ?? ''} count`,
          cold(() => posts.countDocuments(filter)),
        ) as Promise<number>;
      const block = (n: number) =>
        view.get(
          `${tag ?? ''} block ${n}`,
          cold(async () => {
            const records = await posts
              .find(filter, POST_FIELDS)
              .sort(NEWEST_FIRST)
              .skip(n * BLOCK)
              .limit(BLOCK)
              .lean<PostRecord[]>();
            return records.map(toPost);
          }),
        ) as Promise<Post[]>;

      const offset = (page - 1) * limit;
      const first = Math.floor(offset / BLOCK);
      const [total, head] = await Promise.all([count(), first === 0 ? block(0) : undefined]);
      const answer = (list: Post[]) => ({ posts: list, total, page, pages: Math.ceil(total / limit) });
      if (offset >= total) return answer([]);
      const last = Math.floor((Math.min(offset + limit, total) - 1) / BLOCK);
      const blocks = await Promise.all(
        Array.from({ length: last - first + 1 }, (_, i) => (i === 0 && head ? head : block(first + i))),
      );
      const start = offset - first * BLOCK;
      return answer(blocks.flat().slice(start, start + limit));
    },

    /** One page of the caller's posts of both statuses, newest first, and the cursor after it. */
    async listMine(authorId: string, query: PageQuery<Cursor>): Promise<Page<Post>> {
      return findPage(posts, { authorId }, POST_FIELDS, query, toPost);
    },

    /** A published post to anyone; a draft only to its author. Anything else is 404. */
    async getVisible(id: string, viewerId: string | undefined): Promise<Post> {
      const record = await posts.findById(id, POST_FIELDS).lean<PostRecord>();
      if (!record) throw notFound();
      if (record.status !== 'published' && record.authorId.toHexString() !== viewerId) throw notFound();
      return toPost(record);
    },

    async create(authorId: string, post: NewPost): Promise<Post> {
      const record = await posts.create({ ...post, authorId, status: 'draft' });
      return toPost(record.toObject());
    },

    /** Only the author's post. A change from draft to published also sets publishedAt. */
    async update(id: string, authorId: string, changes: PostChanges): Promise<Post> {
      let wasPublished = false;
      const post = await writePost(id, authorId, (current) => {
        wasPublished = current.status === 'published';
        return changes.status === 'published' && current.status === 'draft'
          ? { ...changes, publishedAt: new Date() }
          : changes;
      });
      if (wasPublished || post.status === 'published') await pages.changed();
      return post;
    },

    /** The author's account was deleted: every post of theirs goes, drafts included. Idempotent. */
    async removeAllBy(authorId: string): Promise<void> {
      const { deletedCount } = await posts.deleteMany({ authorId });
      if (deletedCount > 0) await pages.changed();
    },

    /** Deletes the author's post if there is one; nothing tells whether there was. */
    async remove(id: string, authorId: string): Promise<void> {
      const { deletedCount } = await posts.deleteOne({ _id: id, authorId });
      if (deletedCount > 0) await pages.changed();
    },

    /**
     * The internal publish operation (not an endpoint): a draft becomes published when the user
     * is its author, with publishedAt now. Another user's post or none: 404; already published: 409.
     */
    async publish(postId: string, userId: string): Promise<Post> {
      const post = await writePost(
        postId,
        userId,
        () => ({ status: 'published', publishedAt: new Date() }),
        (current) => {
          if (current.status === 'published') throw alreadyPublished();
        },
      );
      await pages.changed();
      return post;
    },
  };
}

export type Posts = ReturnType<typeof createPosts>;
