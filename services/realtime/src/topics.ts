/**
 * What a stream carries: the topics a client asks for, and which events of the bus each one lets
 * through. The bus holds every event of every user; this is where a subscriber sees only its own.
 *
 * - `posts`: published posts, to anyone; with a tag, only posts that have it. The publisher puts
 *   a draft on no public topic, not even its deletion (posts' events).
 * - `my-posts`: the subscriber's own posts, drafts included. Protected.
 * - `notes`: the subscriber's notes. Protected.
 */
import { LIMITS, TAG_PATTERN } from '@cs/contract';
import { HttpError } from '@cs/errors';
import type { BusEvent } from '@cs/event-bus';

export const TOPICS = ['posts', 'my-posts', 'notes'] as const;
export type Topic = (typeof TOPICS)[number];
const PROTECTED: ReadonlySet<Topic> = new Set(['my-posts', 'notes']);
/** A tag as the posts list takes it (letters, digits, hyphens), compared lowercased as stored. */
const TAG = new RegExp(TAG_PATTERN);

export const topicMessages = {
  topicsRequired: 'topics is required: a comma-separated list of posts, my-posts, notes',
  unknownTopic: (name: string) => `Unknown topic "${name.slice(0, 50)}": topics are posts, my-posts, notes`,
  badTag: `tag must be 1 to ${LIMITS.tagMax} letters, digits or hyphens`,
  tagWithoutPosts: 'tag filters the posts topic: ask for posts too',
} as const;

export interface Subscription {
  topics: ReadonlySet<Topic>;
  tag?: string;
}

/** The subscription a query asks for; 400 for an unknown topic or a bad tag. */
export function subscriptionOf(topicsParam: unknown, tagParam: unknown): Subscription {
  if (typeof topicsParam !== 'string' || topicsParam.trim() === '') {
    throw new HttpError(400, topicMessages.topicsRequired);
  }
  const topics = new Set<Topic>();
  for (const name of topicsParam.split(',').map((t) => t.trim())) {
    if (!(TOPICS as readonly string[]).includes(name)) throw new HttpError(400, topicMessages.unknownTopic(name));
    topics.add(name as Topic);
  }
  if (tagParam === undefined) return { topics };
  if (typeof tagParam !== 'string' || !TAG.test(tagParam)) throw new HttpError(400, topicMessages.badTag);
  if (!topics.has('posts')) throw new HttpError(400, topicMessages.tagWithoutPosts);
  return { topics, tag: tagParam.toLowerCase() };
}

/** Whether a subscription needs a caller: a protected topic does. */
export const needsCaller = ({ topics }: Subscription): boolean => [...topics].some((t) => PROTECTED.has(t));

/** Whether `event` goes to a subscriber of `subscription`, who is `userId` (undefined: anonymous). */
export function delivers(subscription: Subscription, userId: string | undefined, event: BusEvent): boolean {
  const topic = event.topic as Topic;
  if (!subscription.topics.has(topic)) return false;
  if (PROTECTED.has(topic)) return userId !== undefined && event.owner === userId;
  if (topic === 'posts' && subscription.tag !== undefined) return (event.tags ?? []).includes(subscription.tag);
  return event.taggedOnly !== true;
}
