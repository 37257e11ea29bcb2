/**
 * The change events of posts, for the realtime service's streams: every write of a post is told
 * on the bus (@cs/event-bus) once it has committed, even when this process dies right after the
 * commit. An outbox of `@cs/outbox`, by its recipe: the entry first (the post's next version),
 * then the write, then the entry tried at once; polling only when that try did not happen.
 *
 * The handler tells the post as it is when the entry is handled (as the write wrote it, when its
 * dispatch says: then with no read), once that shows the write:
 * - it is there, at the entry's version or later: `my-posts.upsert` to its author; on `posts`,
 *   `posts.upsert` when it is published, `posts.remove` when it was published before the write
 *   and is not now. A draft is on no public topic.
 * - it is gone: `my-posts.remove` to its author, and `posts.remove` when it may have been public
 *   (published before the write, or by it).
 * - it is there at an earlier version (the write has not landed yet): tried again, until the
 *   write has landed or never will (`isSettled`).
 * Entries of one post are handled in the order they were written (`orderBy`). Each event's key
 * names what it tells (the post, its version or its end, the topic), so an entry handled twice,
 * or two entries that both find the same version, put one event on the bus. The events on `posts`
 * have no owner: they are public, and the bus files them with the topic, not with their author.
 */
import type { LiveEvent } from '@cs/contract';
import type { EventBus } from '@cs/event-bus';
import type { Logger } from '@cs/log';
import { createOutbox, isSettled, previousEntryId, writeEntryId } from '@cs/outbox';
import {
  POST_FIELDS,
  type Post,
  type PostEventModel,
  type PostEventRecord,
  type PostModel,
  type PostRecord,
  toPost,
} from './model';

/** The events of posts, in the live-update vocabulary (@cs/contract): on `posts` and `my-posts`. */
type PostEvent = Extract<LiveEvent<Post>, { topic: 'posts' | 'my-posts' }>;

/** What a write is about to do to a post, for its entry. */
export interface PostWrite {
  postId: string;
  authorId: string;
  /** The version the post will have; null: the post is deleted. */
  version: number | null;
  /** The post before the write (null: it is created). */
  before: Pick<PostRecord, 'status' | 'tags'> | null;
  /** The write leaves it published. */
  publishes: boolean;
}

export function createPostEvents({
  entries,
  posts,
  bus,
  logger,
}: {
  entries: PostEventModel;
  posts: PostModel;
  bus: EventBus;
  logger: Logger;
}) {
  /** Puts an event on the bus, once for `key`. */
  const tell = (event: PostEvent, key: string) => bus.publish(event, key);
  const outbox = createOutbox<PostEventRecord, PostRecord>({
    name: 'post_events',
    entries,
    what: 'post event',
    orderBy: 'postId',
    logger,
    async handle(entry, asWritten) {
      const record = asWritten ?? (await posts.findById(entry.postId, `${POST_FIELDS} version`).lean<PostRecord>());
      const { postId, authorId } = entry;
      // An empty list or a null may not be stored at all (the outbox writes with $setOnInsert).
      const tagsBefore = entry.tagsBefore ?? [];
      const written = entry.version ?? null;
      if (!record) {
        if (written !== null && !isSettled(entry)) {
          // Created, and not there yet; or deleted since: the deletion's entry tells that.
          throw new Error('the post is not there yet');
        }
        await tell(
          { topic: 'my-posts', kind: 'remove', owner: authorId, data: { _id: postId } },
          `${postId}:gone:mine`,
        );
        if (entry.wasPublished || entry.publishes) {
          await tell(
            { topic: 'posts', kind: 'remove', tags: tagsBefore, data: { _id: postId } },
            `${postId}:gone:public`,
          );
        }
        return;
      }
      const version = record.version ?? 0;
      if (written === null || version < written) {
        // The write has not landed yet (or, settled, never will).
        if (isSettled(entry)) return;
        throw new Error('the post does not show the write yet');
      }
      const post = toPost(record);
      await tell({ topic: 'my-posts', kind: 'upsert', owner: authorId, data: post }, `${postId}:v${version}:mine`);
      const { tags } = post;
      if (post.status === 'published') {
        // Tags it no longer has: their subscribers are told it is gone from them.
        const left = entry.wasPublished ? tagsBefore.filter((tag) => !tags.includes(tag)) : [];
        if (left.length > 0) {
          await tell(
            { topic: 'posts', kind: 'remove', tags: left, taggedOnly: true, data: { _id: postId } },
            `${postId}:v${version}:untagged`,
          );
        }
        await tell({ topic: 'posts', kind: 'upsert', tags, data: post }, `${postId}:v${version}:public`);
      } else if (entry.wasPublished) {
        await tell({ topic: 'posts', kind: 'remove', tags, data: { _id: postId } }, `${postId}:v${version}:public`);
      }
    },
  });

  return {
    /** Records a write before it is made (the recipe's step 1); dispatch the entry once it is. */
    record(write: PostWrite): Promise<PostEventRecord> {
      return outbox.enqueue({
        _id: writeEntryId(write.postId, write.version),
        postId: write.postId,
        authorId: write.authorId,
        version: write.version,
        wasPublished: write.before?.status === 'published',
        publishes: write.publishes,
        tagsBefore: write.before?.tags ?? [],
      } as Omit<PostEventRecord, 'attempts' | 'dueAt' | 'lastError' | 'createdAt'>);
    },
    /**
     * Tries an entry now, in the background: its write is done, and wrote `written` (told as it
     * is, without a read), a new post when `created`.
     */
    dispatch: (entry: PostEventRecord, written?: PostRecord, { created = false } = {}) =>
      outbox.dispatch(entry, { written, first: created, after: previousEntryId(entry.postId, entry.version) }),
    /** Polls for entries no live process tried; returns the function that stops it. */
    start: (intervalMs: number) => outbox.start(intervalMs),
  };
}

export type PostEvents = ReturnType<typeof createPostEvents>;
