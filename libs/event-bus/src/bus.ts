/**
 * The event bus: one Redis stream that every change event goes through, in order, with the ids a
 * client resumes from (`Last-Event-ID`). Services publish (from their outboxes, after the write
 * committed); the realtime service follows it and reads back what a reconnecting client missed.
 *
 * - **Once in the stream.** A publisher may send an event more than once (an outbox handles an
 *   entry at least once). Each event carries a key of its own; a script sets the key and appends
 *   the event in one step, so an event whose key is still remembered is not appended again. Keys
 *   are remembered an hour, and at least twice as long as the stream keeps events.
 * - **Retention.** An event is kept while it is younger than `keepMs` or among the newest
 *   `keepEvents`, whichever keeps more. `trim` drops the rest.
 * - **Resuming.** A reader that knows the id it read last gets every event after it, or learns
 *   that some of them are gone: the stream remembers the newest id it ever dropped
 *   (`max-deleted-entry-id`), so an id at or after it misses nothing. An id that is not of this
 *   stream (after the newest event, or not an id) cannot resume either.
 */
import { Redis as IORedis, type Redis } from 'ioredis';

/** A change, as publishers send it. What a topic means is the publisher's and the subscriber's. */
export interface BusEvent {
  /** The topic: `posts`, `my-posts`, `notes`. */
  topic: string;
  kind: 'upsert' | 'remove';
  /** The user whose event it is, for a private topic. */
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

export interface Retention {
  keepMs: number;
  keepEvents: number;
}

/** What a reader gets after an id: the events, or `gap` when some after it are gone. */
export type Resumed = { gap: false; events: StoredEvent[] } | { gap: true };

const FIELD = 'e';

/** Appends ARGV[1] under a new id unless KEYS[2] (the event's key) is remembered; remembers it for ARGV[2] ms. */
const PUBLISH = `
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[2]) then
  return redis.call('XADD', KEYS[1], '*', '${FIELD}', ARGV[1])
end
return false`;

/**
 * Drops the events that are both older than ARGV[1] (an id: now - keepMs) and not among the
 * newest ARGV[2]. Returns how many went.
 */
const TRIM = `
local over = redis.call('XLEN', KEYS[1]) - tonumber(ARGV[2])
if over <= 0 then return 0 end
local oldest = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', over)
local dropped = 0
for _, entry in ipairs(oldest) do
  local ms, seq = string.match(entry[1], '^(%d+)-(%d+)$')
  local cutMs, cutSeq = string.match(ARGV[1], '^(%d+)-(%d+)$')
  if tonumber(ms) > tonumber(cutMs) or (tonumber(ms) == tonumber(cutMs) and tonumber(seq) >= tonumber(cutSeq)) then break end
  dropped = dropped + redis.call('XDEL', KEYS[1], entry[1])
end
return dropped`;

const ID = /^(\d{1,16})-(\d{1,16})$/;

/** Compares two stream ids: negative, zero or positive. */
export function compareIds(a: string, b: string): number {
  const [, am = '0', as = '0'] = ID.exec(a) ?? [];
  const [, bm = '0', bs = '0'] = ID.exec(b) ?? [];
  return Number(am) - Number(bm) || Number(as) - Number(bs);
}

export const isEventId = (id: string): boolean => ID.test(id);

function parse(id: string, fields: string[]): StoredEvent {
  const at = fields.indexOf(FIELD);
  return { id, ...(JSON.parse(fields[at + 1] ?? '{}') as BusEvent) };
}

export interface EventBus {
  /** Appends `event` once for `key` (at least once from the caller, once in the stream). Its id, or null when the key was seen. */
  publish(event: BusEvent, key: string): Promise<string | null>;
  /** Every event after `id`, up to `max` (the rest with the next read), or `gap` when the stream no longer has them all. */
  after(id: string, max: number): Promise<Resumed>;
  /** The newest id now ('0-0' when the stream is empty): where a new subscriber starts. */
  newest(): Promise<string>;
  /** Drops what the retention no longer needs; how many events went. */
  trim(now?: number): Promise<number>;
  /**
   * Delivers every event after `from`, in order, as it is appended, until stopped: on a
   * connection of its own (a blocking read holds it). A failed read is reported and tried again.
   */
  follow(from: string, deliver: (events: StoredEvent[]) => void, failed: (err: unknown) => void): { stop(): void };
}

/** How long one blocking read waits for new events before it asks again. */
const BLOCK_MS = 5_000;
const READ_COUNT = 1_000;
const RETRY_MS = 500;

/** The retention when none is configured: at least 15 minutes, and 20,000 events. */
export const DEFAULT_RETENTION: Retention = { keepMs: 15 * 60_000, keepEvents: 20_000 };
/** How long a published event's key is remembered: an outbox entry handled again within it publishes nothing. */
export const KEY_TTL_MS = 60 * 60_000;

export function createEventBus(
  redis: Redis,
  { stream = 'realtime:events', retention = DEFAULT_RETENTION }: { stream?: string; retention?: Retention } = {},
): EventBus {
  const keyTtlMs = Math.max(KEY_TTL_MS, 2 * retention.keepMs);

  return {
    async publish(event, key) {
      const id = (await redis.eval(PUBLISH, 2, stream, `${stream}:key:${key}`, JSON.stringify(event), keyTtlMs)) as
        | string
        | null;
      return id ?? null;
    },

    async after(id, max) {
      const info = await streamInfo();
      if (!isEventId(id) || compareIds(id, info.lastId) > 0 || compareIds(id, info.maxDeletedId) < 0) {
        return { gap: true };
      }
      const entries = (await redis.xrange(stream, `(${id}`, '+', 'COUNT', max)) as [string, string[]][];
      return { gap: false, events: entries.map(([entryId, fields]) => parse(entryId, fields)) };
    },

    async newest() {
      return (await streamInfo()).lastId;
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
            deliver(entries.map(([entryId, fields]) => parse(entryId, fields)));
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
      return (await redis.eval(TRIM, 1, stream, `${now - retention.keepMs}-0`, retention.keepEvents)) as number;
    },
  };

  /** The stream's newest id and the newest id it dropped ('0-0' for none, or no stream yet). */
  async function streamInfo(): Promise<{ lastId: string; maxDeletedId: string }> {
    const exists = await redis.exists(stream);
    if (!exists) return { lastId: '0-0', maxDeletedId: '0-0' };
    const flat = (await redis.xinfo('STREAM', stream)) as unknown[];
    const field = (name: string) => String(flat[flat.indexOf(name) + 1] ?? '0-0');
    return { lastId: field('last-generated-id'), maxDeletedId: field('max-deleted-entry-id') };
  }
}

/**
 * A Redis client for the bus whose commands fail at once while Redis is away (a publisher's
 * outbox tries again later; a reader's readiness says so), instead of queueing without bound.
 */
export function busClient(url: string): Redis {
  const redis = new IORedis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  // Each failed command is reported to its caller; the client reconnects on its own.
  redis.on('error', () => undefined);
  return redis;
}

/**
 * A bus client once it is connected, for a reader that needs the bus before it can serve (the
 * realtime service reads the newest id as it starts). Redis not there yet (starting beside us)
 * is waited for, each failed attempt told to `onRetry`, for at most `startupTimeoutMs`.
 */
export async function connectBus(
  url: string,
  {
    startupTimeoutMs = 30_000,
    onRetry,
  }: { startupTimeoutMs?: number; onRetry?: (attempt: number, err: unknown) => void } = {},
): Promise<Redis> {
  const redis = busClient(url);
  let attempts = 0;
  const retried = (err: unknown) => onRetry?.(++attempts, err);
  redis.on('error', retried);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the bus at ${url} did not answer within ${startupTimeoutMs} ms`)),
        startupTimeoutMs,
      );
      redis.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  } catch (err) {
    redis.disconnect();
    throw err;
  } finally {
    redis.off('error', retried);
  }
  return redis;
}
