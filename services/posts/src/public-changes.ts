/**
 * Changes to what everyone sees, per account, past a post's first publish: editing a published
 * post, unpublishing it, publishing it again. Each reaches every reader: every replica's public
 * list catches up with it, and every live stream of the `posts` topic is sent it. One account that
 * flipped its post between draft and published 87 times a second, from addresses that each kept
 * within the gateway's limit, made everyone's reads wait on that work (bench scenario 11, the
 * flipping account).
 *
 * What is bounded is the repeat, not the person. A post's first publish is never counted: it
 * happens once per post, after a create that writes the post, so publishing N new posts costs what
 * creating them costs, and a bulk publisher (an import of 10,000 posts) runs at the rate of its
 * creates. Only the changes that can be made again and again to the same posts, at no cost to the
 * author, are the flipping account's pattern: an account may make PUBLIC_CHANGES_PER_MINUTE of those
 * a minute; past that, 429 with Retry-After, before the post's turn is taken. Drafts are the
 * author's own and are not counted, nor are deletions: a post is deleted once.
 */
import { createWindowLimit } from '@cs/koa';
import type { Config } from './config';
import type { PostRecord } from './model';
import type { PostChanges } from './post-input';

export interface PublicChanges {
  /**
   * Counts `changes` to the author's post `current` when everyone sees them and they are not the
   * post's first publish; throws 429 past the account's limit. Returns whether it was counted.
   */
  take(authorId: string, current: Pick<PostRecord, 'status' | 'publishedAt'>, changes: PostChanges): boolean;
}

/** Whether a change is seen by everyone and is not the post's first publish (publishedAt is set once, then kept). */
export function isRepeatPublicChange(
  current: Pick<PostRecord, 'status' | 'publishedAt'>,
  changes: Pick<PostChanges, 'status'>,
): boolean {
  return current.status === 'published' || (changes.status === 'published' && Boolean(current.publishedAt));
}

export function createPublicChanges({
  PUBLIC_CHANGES_PER_MINUTE = 60,
}: Partial<Pick<Config, 'PUBLIC_CHANGES_PER_MINUTE'>>): PublicChanges {
  const limit = createWindowLimit({ limit: PUBLIC_CHANGES_PER_MINUTE, windowMs: 60_000 });
  return {
    take(authorId, current, changes) {
      if (!isRepeatPublicChange(current, changes)) return false;
      limit.take(authorId);
      return true;
    },
  };
}
