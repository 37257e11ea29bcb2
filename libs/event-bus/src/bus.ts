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
import { Redis as IORedis, type Redis } from 'ioredis';

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
export type Resumed = { gap: false; events: StoredEvent[]; more: boolean } | { gap: true };

/** Which events a resume reads: those of these audiences (`audienceOf`), or all when none are named. */
export interface ResumeScope {
  audiences?: readonly string[];
  /** A page ends once its events' JSON reaches this many bytes (it always has at least one). */
  maxBytes?: number;
}

/** The audience an event is filed under: its topic, or, for a private one, its topic and its owner. */
export const audienceOf = ({ topic, owner }: Pick<BusEvent, 'topic' | 'owner'>): string =>
  owner === undefined ? topic : `${topic}@${owner}`;

const FIELD = 'e';
const AUDIENCE_FIELD = 'a';

/**
 * Lua shared by the scripts. `newer(a, b)`: stream id a after b. `drop(stream, entry, bytes)`:
 * deletes an entry, its filing under its audience (the audience's stream too once empty), and its
 * size from the byte count; returns the count.
 */
const COMMON = `
local function parts(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(seq)
end
local function newer(a, b)
  local am, as = parts(a)
  local bm, bs = parts(b)
  return am > bm or (am == bm and as > bs)
end
local function drop(stream, entry, bytes)
  local event, audience = '', nil
  for i = 1, #entry[2], 2 do
    if entry[2][i] == '${FIELD}' then event = entry[2][i + 1] end
    if entry[2][i] == '${AUDIENCE_FIELD}' then audience = entry[2][i + 1] end
  end
  redis.call('XDEL', stream, entry[1])
  if audience then
    local filed = stream .. ':audience:' .. audience
    redis.call('XDEL', filed, entry[1])
    if redis.call('XLEN', filed) == 0 then redis.call('DEL', filed) end
  end
  return redis.call('DECRBY', bytes, string.len(event))
end
`;

/**
 * KEYS: the stream, the event's key, its audience's stream, the byte count, the reader's byte
 * bound. ARGV: the event's JSON, how long its key is remembered, its audience, the publisher's
 * byte bound. Appends the event unless its key is remembered (then false), files it under its
 * audience by the same id, and drops the oldest events while the stream is over its bytes (never
 * the one just appended).
 */
const PUBLISH = `${COMMON}
if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[2]) then return false end
local id = redis.call('XADD', KEYS[1], '*', '${FIELD}', ARGV[1], '${AUDIENCE_FIELD}', ARGV[3])
-- Ids only grow, and only this script files: this cannot fail short of an audience's stream
-- written by hand; then the event is still in the stream, and only a resume may miss it.
redis.pcall('XADD', KEYS[3], id, '${AUDIENCE_FIELD}', '')
local total = redis.call('INCRBY', KEYS[4], string.len(ARGV[1]))
local bound = tonumber(redis.call('GET', KEYS[5]) or ARGV[4])
while total > bound do
  local oldest = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)[1]
  if oldest == nil or oldest[1] == id then break end
  total = drop(KEYS[1], oldest, KEYS[4])
end
return id`;

/**
 * KEYS: the stream, the byte count, the byte bound. ARGV: an id (now - keepMs), keepEvents,
 * keepBytes. Records keepBytes as the bound every publisher applies, then drops the events that
 * are both older than the id and not among the newest keepEvents. Returns how many went.
 */
const TRIM = `${COMMON}
redis.call('SET', KEYS[3], ARGV[3])
local over = redis.call('XLEN', KEYS[1]) - tonumber(ARGV[2])
if over <= 0 then return 0 end
local oldest = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', over)
local dropped = 0
for _, entry in ipairs(oldest) do
  if not newer(ARGV[1], entry[1]) then break end
  drop(KEYS[1], entry, KEYS[2])
  dropped = dropped + 1
end
return dropped`;

/**
 * KEYS: the stream, then the audiences' streams to read (none: the stream itself). ARGV: the id,
 * the most events, the most bytes. Returns {'gap'}, or {'events', more (0 or 1), id, json, …}.
 */
const AFTER = `${COMMON}
local after, max, budget = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
if not string.match(after, '^%d+%-%d+$') then return {'gap'} end
local last, dropped = '0-0', '0-0'
if redis.call('EXISTS', KEYS[1]) == 1 then
  local info = redis.call('XINFO', 'STREAM', KEYS[1])
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then last = info[i + 1] end
    if info[i] == 'max-deleted-entry-id' then dropped = info[i + 1] end
  end
end
if newer(after, last) or newer(dropped, after) then return {'gap'} end
local entries, more = {}, false
if #KEYS == 1 then
  entries = redis.call('XRANGE', KEYS[1], '(' .. after, '+', 'COUNT', max)
  more = #entries == max
else
  local ids = {}
  for k = 2, #KEYS do
    local filed = redis.call('XRANGE', KEYS[k], '(' .. after, '+', 'COUNT', max)
    if #filed == max then more = true end
    for _, entry in ipairs(filed) do table.insert(ids, entry[1]) end
  end
  table.sort(ids, function(a, b) return newer(b, a) end)
  if #ids > max then more = true end
  for i = 1, math.min(#ids, max) do
    local entry = redis.call('XRANGE', KEYS[1], ids[i], ids[i])[1]
    if entry then table.insert(entries, entry) end
  end
end
local out, used = {'events', 0}, 0
for _, entry in ipairs(entries) do
  local event = ''
  for i = 1, #entry[2], 2 do
    if entry[2][i] == '${FIELD}' then event = entry[2][i + 1] end
  end
  if #out > 2 and used + string.len(event) > budget then
    more = true
    break
  end
  used = used + string.len(event)
  table.insert(out, entry[1])
  table.insert(out, event)
end
if more then out[2] = 1 end
return out`;

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
  /**
   * The events after `id` (of the scope's audiences), up to `max` and the scope's bytes, with
   * `more` when a next read may find others; or `gap` when the stream no longer has them all.
   */
  after(id: string, max: number, scope?: ResumeScope): Promise<Resumed>;
  /** The newest id now ('0-0' when the stream is empty): where a new subscriber starts. */
  newest(): Promise<string>;
  /** Drops what the retention's time and count no longer need; how many events went. */
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
/** A resume's page, in bytes, when its reader names none. */
const PAGE_BYTES = 1_048_576;

/** The retention when none is configured: at least 15 minutes, and 20,000 events; at most 64 MiB. */
export const DEFAULT_RETENTION: Retention = { keepMs: 15 * 60_000, keepEvents: 20_000, keepBytes: 64 * 1_048_576 };
/** How long a published event's key is remembered: an outbox entry handled again within it publishes nothing. */
export const KEY_TTL_MS = 60 * 60_000;

export function createEventBus(
  redis: Redis,
  { stream = 'realtime:events', retention = DEFAULT_RETENTION }: { stream?: string; retention?: Retention } = {},
): EventBus {
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
      const events: StoredEvent[] = [];
      for (let i = 2; i < reply.length; i += 2) {
        events.push({ id: String(reply[i]), ...(JSON.parse(String(reply[i + 1])) as BusEvent) });
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
