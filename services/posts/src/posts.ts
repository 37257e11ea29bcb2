/**
 * The posts domain: every operation the routes call, and the internal publish operation. Returns
 * plain `Post` objects; mongoose documents never leave this module. A post is written through
 * `ownedDocuments` (`@cs/mongo`), so a draft is published once, with one publishedAt, however many
 * requests race for it, on FerretDB as on MongoDB.
 *
 * The public list is kept in memory (listing.ts): every operation that can change what it shows
 * says so before it returns.
 */
import { HttpError } from '@cs/errors';
import type { PageQuery } from '@cs/koa';
import { type Cursor, findPage, ownedDocuments, type Page, type Turns } from '@cs/mongo';
import type { Listing } from './listing';
import { POST_FIELDS, type Post, type PostModel, type PostRecord, toPost } from './model';
import type { ListQuery, NewPost, PostChanges } from './post-input';
import { messages } from './terms';

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
  /** A post is its author's; anyone else's is as good as missing. */
  const owned = ownedDocuments(posts, turns, {
    subject: 'post',
    owner: 'authorId',
    missing: notFound,
    busy: concurrentChange,
  });

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
      const { before, after } = await owned.update(id, authorId, (current) => ({
        set:
          changes.status === 'published' && current.status === 'draft'
            ? { ...changes, publishedAt: new Date() }
            : changes,
      }));
      if (before.status === 'published' || after.status === 'published') {
        await listing.changed({ postId: id }, after);
      }
      return toPost(after);
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
      const { after } = await owned.update(postId, userId, (current) => {
        if (current.status === 'published') throw alreadyPublished();
        return { set: { status: 'published', publishedAt: new Date() } };
      });
      await listing.changed({ postId }, after);
      return toPost(after);
    },
  };
}

export type Posts = ReturnType<typeof createPosts>;
