/**
 * What the bus carries: an event as a publisher sends it, as a reader gets it back (with its id),
 * and the audience it is filed under.
 */

/** A change, as publishers send it. What a topic means is the publisher's and the subscriber's. */
export interface BusEvent {
  /** The topic: `posts`, `my-posts`, `notes`. */
  topic: string;
  kind: 'upsert' | 'remove';
  /**
   * The user whose event it is, for a private topic: only that user's subscribers may get it,
   * and it is filed under them. A public event has none.
   */
  owner?: string;
  /** Labels a subscriber may filter on (a post's tags). */
  tags?: string[];
  /**
   * Only for subscribers that filter on one of `tags`: a post that left those tags, which the
   * others (who see it still) must not be told is gone.
   */
  taggedOnly?: boolean;
  /** What the subscriber gets. */
  data: unknown;
}

/** An event in the stream, with its id. */
export interface StoredEvent extends BusEvent {
  id: string;
}

/** The audience an event is filed under: its topic, or, for a private one, its topic and its owner. */
export const audienceOf = ({ topic, owner }: Pick<BusEvent, 'topic' | 'owner'>): string =>
  owner === undefined ? topic : `${topic}@${owner}`;
