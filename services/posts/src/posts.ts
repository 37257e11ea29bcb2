/**
 * The posts domain: every operation the routes call. Returns plain `Post` objects; mongoose
 * documents never leave this module. A post is written through `ownedDocuments` (`@cs/mongo`), so
 * a draft is published once, with one publishedAt, however many requests race for it, on FerretDB
 * as on MongoDB.
 *
 * The public list is kept in memory (listing.ts): every operation that can change what it shows
 * says so before it returns. Every write is told on the event bus too (post-events.ts): its entry
 * is written before it, and tried right after it.
 */
import { HttpError } from '@cs/errors';
import type { PageQuery } from '@cs/koa';
import {
  type Change,
  type Cursor,
  findPage,
  insertTogether,
  ownedDocuments,
  type Page,
  type SearchPageQuery,
  searchPage,
  type Turns,
} from '@cs/mongo';
import type { SearchQuery } from '@cs/search';
import { Types } from 'mongoose';
import type { Listing } from './listing';
import { POST_FIELDS, type Post, type PostModel, type PostRecord, toPost } from './model';
import type { PostEvents } from './post-events';
import type { ListQuery, NewPost, PostChanges } from './post-input';
import type { PublicChanges } from './public-changes';
import { POST_SEARCH } from './search-fields';
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

function concurrentChange(): HttpError {
  return new HttpError(409, messages.concurrentChange);
}

export interface PostsDeps {
  /**
   * The public list, kept in memory and told of every change to a published post (listing.ts)
   * after it is written and before it is acknowledged.
   */
  listing: Listing;
  /** The change events (post-events.ts). */
  events: PostEvents;
  /** Changes to published posts past their first publish, counted per account (public-changes.ts). */
  publicChanges: PublicChanges;
}

export function createPosts(posts: PostModel, turns: Turns, { listing, events, publicChanges }: PostsDeps) {
  /** New posts, inserted with those created in the same turn (group commit). */
  const insert = insertTogether(posts);
  /** A post is its author's; anyone else's is as good as missing. */
  const owned = ownedDocuments(posts, turns, {
    subject: 'post',
    owner: 'authorId',
    missing: notFound,
    busy: concurrentChange,
  });

  /** The event entry of a write, written right before it (ownedDocuments' `prepare`). */
  const tell =
    (postId: string, authorId: string) => (current: PostRecord, change: Change<PostRecord>, version: number) =>
      events.record({
        postId,
        authorId,
        version,
        before: current,
        publishes: (change.set.status ?? current.status) === 'published',
      });

  return {
    /**
     * Published posts in the order asked (newest first by default), of the tag and of the author
     * when given. `client` is whose turn a lookup takes.
     */
    async listPublished({ page, limit, tag, author, sort, search }: ListQuery, client: string): Promise<PostPage> {
      const offset = (page - 1) * limit;
      const { posts: list, total } = search
        ? await listing.search({ query: search, offset, limit, tag, authorId: author }, client)
        : await listing.page({ offset, limit, tag, authorId: author, sort }, client);
      return { posts: list, total, page, pages: Math.ceil(total / limit) };
    },

    /** One page of the caller's posts of both statuses, newest first, and the cursor after it. */
    async listMine(authorId: string, query: PageQuery<Cursor>): Promise<Page<Post>> {
      return findPage(posts, { authorId }, POST_FIELDS, query, toPost);
    },

    /** One page of the caller's posts of both statuses that match `search`, best first. */
    async searchMine(authorId: string, search: SearchQuery, page: SearchPageQuery): Promise<Page<Post>> {
      return searchPage(posts, { authorId }, { fields: POST_FIELDS, query: search, ...POST_SEARCH }, page, toPost);
    },

    /**
     * A published post to anyone, from the listing's memory when it is listed there; a draft only
     * to its author. Anything else is 404. `client` is whose turn a lookup takes.
     */
    async getVisible(id: string, viewerId: string | undefined, client: string): Promise<Post> {
      const listed = await listing.published(id, client);
      if (listed) return listed;
      const record = await posts.findById(id, POST_FIELDS).lean<PostRecord>();
      if (!record) throw notFound();
      if (record.status !== 'published' && record.authorId.toHexString() !== viewerId) throw notFound();
      return toPost(record);
    },

    async create(authorId: string, post: NewPost): Promise<Post> {
      const _id = new Types.ObjectId();
      const told = await events.record({
        postId: _id.toHexString(),
        authorId,
        version: 0,
        before: null,
        publishes: false,
      });
      const created = new posts({ _id, ...post, authorId, status: 'draft' });
      await insert(created);
      const record = created.toObject() as PostRecord;
      events.dispatch(told, record, { created: true });
      return toPost(record);
    },

    /**
     * Only the author's post. A change from draft to published also sets publishedAt. A change
     * that everyone sees, past the post's first publish, is counted against the author's limit
     * once, however many times a race makes it read the post again.
     */
    async update(id: string, authorId: string, changes: PostChanges): Promise<Post> {
      let counted = false;
      const { before, after, prepared } = await owned.update(
        id,
        authorId,
        (current) => {
          if (!counted) counted = publicChanges.take(authorId, current, changes);
          return {
            set:
              changes.status === 'published' && current.status === 'draft'
                ? { ...changes, publishedAt: new Date() }
                : changes,
          };
        },
        tell(id, authorId),
      );
      if (prepared) events.dispatch(prepared, after);
      if (before.status === 'published' || after.status === 'published') {
        await listing.changed({ postId: id }, after);
      }
      return toPost(after);
    },

    /** The author's account was deleted: every post of theirs goes, drafts included. Idempotent. */
    async removeAllBy(authorId: string): Promise<void> {
      // Its published posts leave the public topic; its own topics have no one left to tell.
      const published = await posts
        .find({ authorId, status: 'published' }, { _id: 1, status: 1, tags: 1 })
        .lean<Pick<PostRecord, '_id' | 'status' | 'tags'>[]>();
      const told = await Promise.all(
        published.map((post) =>
          events.record({ postId: post._id.toHexString(), authorId, version: null, before: post, publishes: false }),
        ),
      );
      const { deletedCount } = await posts.deleteMany({ authorId });
      for (const entry of told) events.dispatch(entry);
      if (deletedCount > 0) await listing.changed({ authorId });
    },

    /** Deletes the author's post if there is one; nothing tells whether there was. */
    async remove(id: string, authorId: string): Promise<void> {
      const removed = await owned.remove(id, authorId, (current) =>
        events.record({ postId: id, authorId, version: null, before: current, publishes: false }),
      );
      if (!removed) return;
      if (removed.prepared) events.dispatch(removed.prepared);
      await listing.changed({ postId: id }, null);
    },
  };
}

export type Posts = ReturnType<typeof createPosts>;
