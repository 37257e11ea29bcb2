/**
 * What the bus carries: an event as a publisher sends it, as a reader gets it back (with its id),
 * and the audience it is filed under.
 */

/**
 * A change, as publishers send it. What a topic, a kind and the data mean is the publisher's and
 * the subscriber's (the live-update vocabulary of @cs/contract); the bus keeps the event as it is
 * given, fields of their own included, and reads only its topic and owner, to file it.
 */
export interface BusEvent<Data = unknown> {
  topic: string;
  kind: string;
  /**
   * The user whose event it is, for a private topic: only that user's subscribers may get it,
   * and it is filed under them. A public event has none.
   */
  owner?: string;
  /** What the subscriber gets. */
  data: Data;
}

/** An event in the stream, with its id. */
export type StoredEvent<E extends BusEvent = BusEvent> = E & { id: string };

/** The audience an event is filed under: its topic, or, for a private one, its topic and its owner. */
export const audienceOf = ({ topic, owner }: Pick<BusEvent, 'topic' | 'owner'>): string =>
  owner === undefined ? topic : `${topic}@${owner}`;
