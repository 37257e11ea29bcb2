/**
 * The event bus: one Redis stream that every change event goes through, in order, with the ids a
 * client resumes from (`Last-Event-ID`). Services publish (from their outboxes, after the write
 * committed); the realtime service follows it and reads back what a reconnecting client missed.
 *
 * - **Once in the stream.** A publisher may send an event more than once (an outbox handles an
 *   entry at least once). Each event carries a key of its own; a script sets the key and appends
 *   the event in one step, so an event whose key is still remembered is not appended again. Keys
 *   are remembered an hour, and at least twice as long as the stream keeps events.
 * - **Filed by audience.** Each event is also filed, by id alone, under its audience
 *   (`audienceOf`): its topic, or its topic and owner for a private one. A reader that resumes
 *   reads the audiences it may see, not every event of every user: an anonymous `posts` stream
 *   that resumes from the start reads the public posts, never the notes of the whole service.
 * - **Retention.** An event is kept while it is younger than `keepMs` or among the newest
 *   `keepEvents`, whichever keeps more, and never past `keepBytes` of events in all: `trim` drops
 *   what time and count allow, and each publish drops the oldest while the bytes are over. The
 *   reader's `keepBytes` (set by its first `trim`) binds every publisher, whatever they were told.
 * - **Resuming.** A reader that knows the id it read last gets every event after it, a page at a
 *   time bounded in count and in bytes, or learns that some of them are gone: the stream
 *   remembers the newest id it ever dropped (`max-deleted-entry-id`), so an id at or after it
 *   misses nothing. An id that is not of this stream (after the newest event, or not an id)
 *   cannot resume either. The check and the read are one script, so a trim between them cannot
 *   make a page silently short.
 */
import type { Redis } from 'ioredis';
import { audienceOf, type BusEvent, type StoredEvent } from './event';
import { AFTER, FIELD, PUBLISH, TRIM } from './scripts';

export interface Retention {
  keepMs: number;
  keepEvents: number;
  /** The most the events may take in all (their JSON), whatever time and count would keep. */
  keepBytes: number;
}

/**
 * What a reader gets after an id: the events (and whether more may follow them), or `gap` when
 * some after it are gone.
 */
export type Resumed<E extends BusEvent = BusEvent> =
  | { gap: false; events: StoredEvent<E>[]; more: boolean }
  | { gap: true };

/** Which events a resume reads: those of these audiences (`audienceOf`), or all when none are named. */
export interface ResumeScope {
  audiences?: readonly string[];
  /** A page ends once its events' JSON reaches this many bytes (it always has at least one). */
  maxBytes?: number;
}

function parse<E extends BusEvent>(id: string, fields: string[]): StoredEvent<E> {
  const at = fields.indexOf(FIELD);
  return { id, ...(JSON.parse(fields[at + 1] ?? '{}') as E) };
}

/**
 * The bus of a stream whose publishers put `E` on it (the bus checks nothing of it: a reader gets
 * back what was published).
 */
export interface EventBus<E extends BusEvent = BusEvent> {
  /** Appends `event` once for `key` (at least once from the caller, once in the stream). Its id, or null when the key was seen. */
  publish(event: E, key: string): Promise<string | null>;
  /**
   * The events after `id` (of the scope's audiences), up to `max` and the scope's bytes, with
   * `more` when a next read may find others; or `gap` when the stream no longer has them all.
   */
  after(id: string, max: number, scope?: ResumeScope): Promise<Resumed<E>>;
  /** The newest id now ('0-0' when the stream is empty): where a new subscriber starts. */
  newest(): Promise<string>;
  /** Drops what the retention's time and count no longer need; how many events went. */
  trim(now?: number): Promise<number>;
  /**
   * Delivers every event after `from`, in order, as it is appended, until stopped: on a
   * connection of its own (a blocking read holds it). A failed read is reported and tried again.
   */
  follow(from: string, deliver: (events: StoredEvent<E>[]) => void, failed: (err: unknown) => void): { stop(): void };
}

/** How long one blocking read waits for new events before it asks again. */
const BLOCK_MS = 5_000;
const READ_COUNT = 1_000;
const RETRY_MS = 500;
/** A resume's page, in bytes, when its reader names none. */
const PAGE_BYTES = 1_048_576;

/** The retention when none is configured: at least 15 minutes, and 20,000 events; at most 64 MiB. */
export const DEFAULT_RETENTION: Retention = { keepMs: 15 * 60_000, keepEvents: 20_000, keepBytes: 64 * 1_048_576 };
/** How long a published event's key is remembered: an outbox entry handled again within it publishes nothing. */
export const KEY_TTL_MS = 60 * 60_000;

export function createEventBus<E extends BusEvent = BusEvent>(
  redis: Redis,
  { stream = 'realtime:events', retention = DEFAULT_RETENTION }: { stream?: string; retention?: Retention } = {},
): EventBus<E> {
  const keyTtlMs = Math.max(KEY_TTL_MS, 2 * retention.keepMs);
  const bytesKey = `${stream}:bytes`;
  const boundKey = `${stream}:max-bytes`;
  const filedUnder = (audience: string) => `${stream}:audience:${audience}`;

  return {
    async publish(event, key) {
      const audience = audienceOf(event);
      const id = (await redis.eval(
        PUBLISH,
        5,
        stream,
        `${stream}:key:${key}`,
        filedUnder(audience),
        bytesKey,
        boundKey,
        JSON.stringify(event),
        keyTtlMs,
        audience,
        retention.keepBytes,
      )) as string | null;
      return id ?? null;
    },

    async after(id, max, { audiences = [], maxBytes = PAGE_BYTES } = {}) {
      const reply = (await redis.eval(
        AFTER,
        1 + audiences.length,
        stream,
        ...audiences.map(filedUnder),
        id,
        max,
        maxBytes,
      )) as [string, ...(string | number)[]];
      if (reply[0] === 'gap') return { gap: true };
      const events: StoredEvent<E>[] = [];
      for (let i = 2; i < reply.length; i += 2) {
        events.push({ id: String(reply[i]), ...(JSON.parse(String(reply[i + 1])) as E) });
      }
      return { gap: false, events, more: reply[1] === 1 };
    },

    async newest() {
      if (!(await redis.exists(stream))) return '0-0';
      const flat = (await redis.xinfo('STREAM', stream)) as unknown[];
      return String(flat[flat.indexOf('last-generated-id') + 1] ?? '0-0');
    },

    follow(from, deliver, failed) {
      // Its first read waits for its own connection, which opens as it is made: with the bus
      // client's fail-fast setting it failed at once, and the follower lost its first second.
      const reader = redis.duplicate({ enableOfflineQueue: true });
      let stopped = false;
      let last = from;
      void (async () => {
        while (!stopped) {
          try {
            const read = (await reader.xread('COUNT', READ_COUNT, 'BLOCK', BLOCK_MS, 'STREAMS', stream, last)) as
              | [string, [string, string[]][]][]
              | null;
            const entries = read?.[0]?.[1] ?? [];
            if (entries.length === 0) continue;
            last = (entries.at(-1) as [string, string[]])[0];
            deliver(entries.map(([entryId, fields]) => parse<E>(entryId, fields)));
          } catch (err) {
            if (stopped) break;
            failed(err);
            await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
          }
        }
      })();
      return {
        stop() {
          stopped = true;
          reader.disconnect();
        },
      };
    },

    async trim(now = Date.now()) {
      return (await redis.eval(
        TRIM,
        3,
        stream,
        bytesKey,
        boundKey,
        `${now - retention.keepMs}-0`,
        retention.keepEvents,
        retention.keepBytes,
      )) as number;
    },
  };
}
