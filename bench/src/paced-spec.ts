/**
 * What paced-load.js is told (its streams, each a kind of request at a pace, from its addresses)
 * and what it answers per stream name. Scenario 11 builds the specs (attacks/), paced-load.ts
 * sends them.
 */

export type PacedRequest =
  | { kind: 'get'; path: string; headers?: Record<string, string> }
  | { kind: 'json'; method: 'POST' | 'PUT'; path: string; headers?: Record<string, string>; body: unknown }
  /** GET /api/posts?page&limit&tag: a tag, a limit in 1..maxLimit, a page up to that list's last. */
  | { kind: 'list pages'; tags: { tag: string; total: number }[]; maxLimit: number }
  /** PUT `path` with `{status}`, draft and published in turn. */
  | { kind: 'flip'; path: string; headers: Record<string, string> }
  /** POST /api/auth/login for an account that does not exist, with a wrong password. */
  | { kind: 'unknown login' }
  /**
   * A new post (POST /api/posts, a distinct title each) and then its publish (PUT status=published):
   * two requests, timed and counted as one (the first status other than 2xx, or the publish's).
   */
  | { kind: 'create and publish'; headers: Record<string, string>; tag: string }
  /**
   * A stream opened (GET `path`), read for `readMs` after its headers, then closed: the latency is
   * the time to its headers.
   */
  | { kind: 'stream briefly'; path: string; headers?: Record<string, string>; readMs: number }
  /** PUT `path` (a note) with a body of `bodyBytes` characters: big events on the bus. */
  | { kind: 'note update'; path: string; headers: Record<string, string>; bodyBytes: number };

export interface PacedStream {
  /** Streams with the same name are summed into one result. */
  name: string;
  request: PacedRequest;
  ratePerS: number;
  concurrency: number;
  /** Loopback source addresses, used in turn, one request after another. */
  addresses: string[];
  /**
   * Instead of `addresses`, a botnet's: a fresh address every `perAddress` requests, never one used
   * before (127.`block`.y.z, up to 64,516 of them), each on a connection of its own.
   */
  fresh?: { block: number; perAddress: number };
  /** At most this many requests, then the stream stops (before its duration, if it gets there). */
  total?: number;
}

export interface PacedSpec {
  gateway: string;
  durationS: number;
  seed: number;
  streams: PacedStream[];
}

export interface PacedResult {
  sent: number;
  /** Answered (any status) per second of the run (of its duration, or until the last answer when `total` ended it first). */
  rps: number;
  /** The run's duration, or less when every stream of this name stopped at its `total` first. */
  seconds: number;
  /** Of the answered requests, in milliseconds. */
  p50: number;
  p99: number;
  /** 2xx answers over everything sent (timeouts and socket errors count as failures). */
  succeeded: number;
  /** Counts per status, and `error` for requests that got no answer. */
  statuses: Record<string, number>;
}
