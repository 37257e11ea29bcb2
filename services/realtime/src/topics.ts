/**
 * What a stream carries: the topics a client asks for (the live-update vocabulary of
 * @cs/contract), and which events of the bus each one lets through. The bus holds every event of
 * every user; this is where a subscriber sees only its own.
 *
 * - `posts`: published posts, to anyone; with a tag, only posts that have it. The publisher puts
 *   a draft on no public topic, not even its deletion (posts' events).
 * - `my-posts`: the subscriber's own posts, drafts included. Protected.
 * - `notes`: the subscriber's notes. Protected.
 */
import { isProtectedTopic, isTopic, LIMITS, type LiveEvent, TAG_PATTERN, TOPICS, type Topic } from '@cs/contract';
import { HttpError } from '@cs/errors';

/** A tag as the posts list takes it (letters, digits, hyphens), compared lowercased as stored. */
const TAG = new RegExp(TAG_PATTERN);
const TOPIC_LIST = TOPICS.join(', ');

export const topicMessages = {
  topicsRequired: `topics is required: a comma-separated list of ${TOPIC_LIST}`,
  unknownTopic: (name: string) => `Unknown topic "${name.slice(0, 50)}": topics are ${TOPIC_LIST}`,
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
    if (!isTopic(name)) throw new HttpError(400, topicMessages.unknownTopic(name));
    topics.add(name);
  }
  if (tagParam === undefined) return { topics };
  if (typeof tagParam !== 'string' || !TAG.test(tagParam)) throw new HttpError(400, topicMessages.badTag);
  if (!topics.has('posts')) throw new HttpError(400, topicMessages.tagWithoutPosts);
  return { topics, tag: tagParam.toLowerCase() };
}

/** Whether a subscription needs a caller: a protected topic does. */
export const needsCaller = ({ topics }: Subscription): boolean => [...topics].some(isProtectedTopic);

/** Whether `event` goes to a subscriber of `subscription`, who is `userId` (undefined: anonymous). */
export function delivers(subscription: Subscription, userId: string | undefined, event: LiveEvent): boolean {
  if (!subscription.topics.has(event.topic)) return false;
  // Every topic but posts is its owner's alone: one the vocabulary adds is closed until said otherwise here.
  if (event.topic !== 'posts') return userId !== undefined && event.owner === userId;
  if (subscription.tag !== undefined) return (event.tags ?? []).includes(subscription.tag);
  return event.taggedOnly !== true;
}
