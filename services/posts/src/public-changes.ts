/**
 * Changes to what everyone sees, per account: publishing a post, unpublishing it, or editing one
 * that is published. Each reaches every reader: every replica's public list catches up with it,
 * and every live stream of the `posts` topic is sent it. One account that flipped its post between
 * draft and published 87 times a second, from addresses that each kept within the gateway's
 * limit, made everyone's reads wait on that work (bench scenario 11, the flipping account).
 *
 * So an account may make PUBLIC_CHANGES_PER_MINUTE such changes a minute; past that, 429 with
 * Retry-After, before the post's turn is taken. Drafts are the author's own and are not counted,
 * nor are deletions: a post is deleted once, after the publish that counted.
 */
import { createWindowLimit, type WindowLimit } from '@cs/koa';
import type { Config } from './config';

export function createPublicChanges({
  PUBLIC_CHANGES_PER_MINUTE = 60,
}: Partial<Pick<Config, 'PUBLIC_CHANGES_PER_MINUTE'>>): WindowLimit {
  return createWindowLimit({ limit: PUBLIC_CHANGES_PER_MINUTE, windowMs: 60_000 });
}
