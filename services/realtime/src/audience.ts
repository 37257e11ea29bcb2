/**
 * The streams of this process, filed by what their subscriptions can let through, so that an
 * event visits only the streams that may get it: with 10,000 streams open, a note visits its
 * owner's streams, not the 10,000. Whether a visited stream gets it is still `delivers`'s call
 * (topics.ts); this only leaves out streams it would refuse.
 *
 * A stream is filed under one key per topic it asks for:
 * - `posts`: every event on posts that is not only for tag subscribers;
 * - `posts` with a tag: the events on posts that carry the tag;
 * - `my-posts`, `notes`: the events of the subscriber's own documents.
 * An event's keys name one topic, and a stream has one key for it, so no stream is visited twice.
 */
import type { LiveEvent } from '@cs/contract';
import { audienceOf } from '@cs/event-bus';
import type { Subscription } from './topics';

export interface Listener {
  subscription: Subscription;
  /** The caller, for protected topics; undefined when anonymous. */
  userId: string | undefined;
}

export class Audience<M extends Listener> {
  private readonly byKey = new Map<string, Set<M>>();

  add(member: M): void {
    for (const key of keysOf(member)) {
      const filed = this.byKey.get(key);
      if (filed) filed.add(member);
      else this.byKey.set(key, new Set([member]));
    }
  }

  delete(member: M): void {
    for (const key of keysOf(member)) {
      const filed = this.byKey.get(key);
      filed?.delete(member);
      if (filed?.size === 0) this.byKey.delete(key);
    }
  }

  /** The streams that may get `event`, each once. */
  *of(event: LiveEvent): Generator<M> {
    for (const key of eventKeys(event)) yield* this.byKey.get(key) ?? [];
  }
}

function keysOf({ subscription, userId }: Listener): string[] {
  return [...subscription.topics].flatMap((topic) => {
    if (topic === 'posts') return [subscription.tag === undefined ? 'posts' : `posts#${subscription.tag}`];
    return userId === undefined ? [] : [`${topic}@${userId}`];
  });
}

function eventKeys(event: LiveEvent): string[] {
  if (event.topic !== 'posts') return event.owner === undefined ? [] : [`${event.topic}@${event.owner}`];
  const tagged = [...new Set(event.tags ?? [])].map((tag) => `posts#${tag}`);
  return event.taggedOnly === true ? tagged : ['posts', ...tagged];
}

/**
 * The audiences of the bus (@cs/event-bus `audienceOf`) a stream may see, which its resume reads:
 * the public posts (a tag is filtered as they are read), and its caller's own posts and notes.
 */
export function resumeAudiences({ subscription, userId }: Listener): string[] {
  return [...subscription.topics].flatMap((topic) => {
    if (topic === 'posts') return [audienceOf({ topic })];
    return userId === undefined ? [] : [audienceOf({ topic, owner: userId })];
  });
}
