/**
 * The posts domain: every operation the routes call, and the internal publish operation. Returns
 * plain `Post` objects; mongoose documents never leave this module. Every update of a post is its
 * next version, taken as a turn (`@cs/mongo` turns), so a draft is published once, with one
 * publishedAt, however many requests race for it, on FerretDB as on MongoDB.
 *
 * The public list is kept in memory (listing.ts): every operation that can change what it shows
 * says so before it returns.
 */
import { HttpError } from '@cs/errors';
import type { PageQuery } from '@cs/koa';
import { type Cursor, findPage, type Page, type Turns } from '@cs/mongo';
import type { Listing } from './listing';
import { POST_FIELDS, type Post, type PostModel, type PostRecord, toPost } from './model';
import type { ListQuery, NewPost, PostChanges } from './post-input';
import { messages } from './schemas';

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
 * `listing`: the public list, kept in memory and told of every change to a published post
 * (listing.ts) after it is written and before it is acknowledged.
 */
export function createPosts(posts: PostModel, turns: Turns, listing: Listing) {
  /**
   * One write to the author's post, in its turn; anyone else's post is as good as missing.
   * `check` refuses before the turn is taken.
   */
  function writePost(
    id: string,
    authorId: string,
    change: (current: PostRecord) => Partial<PostRecord>,
    check?: (current: PostRecord) => void,
  ): Promise<PostRecord> {
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
        return record ?? null;
      },
      missing: notFound,
      busy: concurrentChange,
    });
  }

  return {
    /** Published posts, newest first, of the tag when given. `client` is whose turn a lookup takes. */
    async listPublished({ page, limit, tag }: ListQuery, client: string): Promise<PostPage> {
      const { posts: list, total } = await listing.page({ offset: (page - 1) * limit, limit, tag }, client);
      return { posts: list, total, page, pages: Math.ceil(total / limit) };
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
      const record = await writePost(id, authorId, (current) => {
        wasPublished = current.status === 'published';
        return changes.status === 'published' && current.status === 'draft'
          ? { ...changes, publishedAt: new Date() }
          : changes;
      });
      if (wasPublished || record.status === 'published') await listing.changed({ postId: id }, record);
      return toPost(record);
    },

    /** The author's account was deleted: every post of theirs goes, drafts included. Idempotent. */
    async removeAllBy(authorId: string): Promise<void> {
      const { deletedCount } = await posts.deleteMany({ authorId });
      if (deletedCount > 0) await listing.changed({ authorId });
    },

    /** Deletes the author's post if there is one; nothing tells whether there was. */
    async remove(id: string, authorId: string): Promise<void> {
      const { deletedCount } = await posts.deleteOne({ _id: id, authorId });
      if (deletedCount > 0) await listing.changed({ postId: id }, null);
    },

    /**
     * The internal publish operation (not an endpoint): a draft becomes published when the user
     * is its author, with publishedAt now. Another user's post or none: 404; already published: 409.
     */
    async publish(postId: string, userId: string): Promise<Post> {
      const record = await writePost(
        postId,
        userId,
        () => ({ status: 'published', publishedAt: new Date() }),
        (current) => {
          if (current.status === 'published') throw alreadyPublished();
        },
      );
      await listing.changed({ postId }, record);
      return toPost(record);
    },
  };
}

export type Posts = ReturnType<typeof createPosts>;
