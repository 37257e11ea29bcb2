/**
 * The posts domain: every operation the routes call, and the internal publish operation. Returns
 * plain `Post` objects; mongoose documents never leave this module.
 */
import { HttpError } from '@cs/errors';
import type { QueryFilter } from 'mongoose';
import { POST_FIELDS, type Post, type PostModel, type PostRecord, toPost } from './model';
import type { ListQuery, NewPost, PostChanges } from './post-input';
import { messages } from './schemas';

export interface PostPage {
  posts: Post[];
  total: number;
  page: number;
  pages: number;
}

const NEWEST_FIRST = { createdAt: -1, _id: -1 } as const;

function notFound(): HttpError {
  return new HttpError(404, messages.notFound);
}

export function createPosts(posts: PostModel) {
  return {
    /** Published posts, newest first, with the tag filter when given. Count and page run together. */
    async listPublished({ page, limit, tag }: ListQuery): Promise<PostPage> {
      const filter: QueryFilter<PostRecord> =
        tag === undefined ? { status: 'published' } : { status: 'published', tags: tag };
      const [total, records] = await Promise.all([
        posts.countDocuments(filter),
        posts
          .find(filter, POST_FIELDS)
          .sort(NEWEST_FIRST)
          .skip((page - 1) * limit)
          .limit(limit)
          .lean<PostRecord[]>(),
      ]);
      return { posts: records.map(toPost), total, page, pages: Math.ceil(total / limit) };
    },

    /** The caller's posts of both statuses, newest first. */
    async listMine(authorId: string): Promise<Post[]> {
      const records = await posts.find({ authorId }, POST_FIELDS).sort(NEWEST_FIRST).lean<PostRecord[]>();
      return records.map(toPost);
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

    /**
     * Only the author's post matches. A change to published from draft also sets publishedAt,
     * decided by the database (the filter on status), so two racing requests cannot both do it.
     */
    async update(id: string, authorId: string, changes: PostChanges): Promise<Post> {
      // No projection: FerretDB does not implement it on findAndModify, and the schema is strict.
      const options = { returnDocument: 'after', runValidators: true } as const;
      let record: PostRecord | null = null;
      if (changes.status === 'published') {
        record = await posts
          .findOneAndUpdate(
            { _id: id, authorId, status: 'draft' },
            { $set: { ...changes, publishedAt: new Date() } },
            options,
          )
          .lean<PostRecord>();
      }
      record ??= await posts.findOneAndUpdate({ _id: id, authorId }, { $set: changes }, options).lean<PostRecord>();
      if (!record) throw notFound();
      return toPost(record);
    },

    /** Deletes the author's post if there is one; nothing tells whether there was. */
    async remove(id: string, authorId: string): Promise<void> {
      await posts.deleteOne({ _id: id, authorId });
    },

    /**
     * The internal publish operation (not an endpoint): a draft becomes published when the user
     * is its author, with publishedAt now. Another user's post or none: 404; already published: 409.
     */
    async publish(postId: string, userId: string): Promise<Post> {
      const record = await posts
        .findOneAndUpdate(
          { _id: postId, authorId: userId, status: 'draft' },
          { $set: { status: 'published', publishedAt: new Date() } },
          { returnDocument: 'after', runValidators: true },
        )
        .lean<PostRecord>();
      if (record) return toPost(record);
      const existing = await posts.exists({ _id: postId, authorId: userId });
      throw existing ? new HttpError(409, messages.alreadyPublished) : notFound();
    },
  };
}

export type Posts = ReturnType<typeof createPosts>;
