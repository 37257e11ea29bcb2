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
import { isProtectedTopic, isTopic, type LiveEvent, type Topic, topicMessages } from '@cs/contract';
import { HttpError } from '@cs/errors';

/** A stream's query, once validateQuery has held it to the contract's subscribeQuerySchema. */
export interface SubscribeQuery {
  topics: string;
  tag?: string;
  ticket?: string;
  lastEventId?: string;
}

export interface Subscription {
  topics: ReadonlySet<Topic>;
  tag?: string;
}

/**
 * The subscription a query asks for. The schema has checked its shape (each parameter one string,
 * the tag's pattern); what it cannot say is read here, from the vocabulary: a list with no entry
 * is no topics (400 topics required), an entry that is no topic is named (400), and a tag needs
 * the posts topic (400). The tag is compared lowercased, as stored.
 */
export function subscriptionOf({ topics: list, tag }: SubscribeQuery): Subscription {
  if (list.trim() === '') throw new HttpError(400, topicMessages.topicsRequired);
  const topics = new Set<Topic>();
  for (const name of list.split(',').map((t) => t.trim())) {
    if (!isTopic(name)) throw new HttpError(400, topicMessages.unknownTopic(name));
    topics.add(name);
  }
  if (tag === undefined) return { topics };
  if (!topics.has('posts')) throw new HttpError(400, topicMessages.tagWithoutPosts);
  return { topics, tag: tag.toLowerCase() };
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
