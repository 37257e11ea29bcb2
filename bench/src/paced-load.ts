/**
 * Requests at a fixed pace, in a process of its own (as load.ts, so the load never shares an event
 * loop with what it measures): each stream sends at most `ratePerS` a second with at most
 * `concurrency` in flight, from its own loopback source addresses (the gateway counts its rate
 * limits and the services take turns per client address). Every status is counted and every
 * latency kept; the summary per stream name is printed as JSON on stdout.
 *
 * What a stream sends is described in the spec, so that attacks.ts says everything in one place;
 * the choices that vary (a list page, an unknown e-mail) come from a seeded generator, so a run
 * sends the same requests as the last.
 */

import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { median, percentile, round } from './stats';

export type PacedRequest =
  | { kind: 'get'; path: string; headers?: Record<string, string> }
  | { kind: 'json'; method: 'POST' | 'PUT'; path: string; headers?: Record<string, string>; body: unknown }
  /** GET /api/posts?page&limit&tag: a tag, a limit in 1..maxLimit, a page up to that list's last. */
  | { kind: 'list pages'; tags: { tag: string; total: number }[]; maxLimit: number }
  /** PUT `path` with `{status}`, draft and published in turn. */
  | { kind: 'flip'; path: string; headers: Record<string, string> }
  /** POST /api/auth/login for an account that does not exist, with a wrong password. */
  | { kind: 'unknown login' };

export interface PacedStream {
  /** Streams with the same name are summed into one result. */
  name: string;
  request: PacedRequest;
  ratePerS: number;
  concurrency: number;
  /** Loopback source addresses, used in turn, one request after another. */
  addresses: string[];
}

export interface PacedSpec {
  gateway: string;
  durationS: number;
  seed: number;
  streams: PacedStream[];
}

export interface PacedResult {
  sent: number;
  /** Answered (any status) per second of the run. */
  rps: number;
  /** Of the answered requests, in milliseconds. */
  p50: number;
  p99: number;
  /** 2xx answers over everything sent (timeouts and socket errors count as failures). */
  succeeded: number;
  /** Counts per status, and `error` for requests that got no answer. */
  statuses: Record<string, number>;
}

/** A request that takes this long counts as failed. */
const TIMEOUT_MS = 30_000;

/** mulberry32: a small seeded generator, so every run picks the same pages. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Outgoing {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

function nextRequest(request: PacedRequest, i: number, random: () => number): Outgoing {
  const json = { 'content-type': 'application/json' };
  switch (request.kind) {
    case 'get':
      return { method: 'GET', path: request.path, headers: request.headers ?? {} };
    case 'json':
      return {
        method: request.method,
        path: request.path,
        headers: { ...json, ...request.headers },
        body: JSON.stringify(request.body),
      };
    case 'list pages': {
      const { tag, total } = request.tags[Math.floor(random() * request.tags.length)] ?? { tag: '', total: 1 };
      const limit = 1 + Math.floor(random() * request.maxLimit);
      const page = 1 + Math.floor(random() * Math.max(1, Math.ceil(total / limit)));
      return { method: 'GET', path: `/api/posts?page=${page}&limit=${limit}&tag=${tag}`, headers: {} };
    }
    case 'flip':
      return {
        method: 'PUT',
        path: request.path,
        headers: { ...json, ...request.headers },
        body: JSON.stringify({ status: i % 2 === 0 ? 'draft' : 'published' }),
      };
    case 'unknown login':
      return {
        method: 'POST',
        path: '/api/auth/login',
        headers: json,
        body: JSON.stringify({
          email: `nobody-${Math.floor(random() * 1e12).toString(36)}@example.com`,
          password: 'not the password',
        }),
      };
  }
}

/** One request; its status, or `error` with no answer. */
function send(base: URL, agent: http.Agent, out: Outgoing): Promise<string> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: base.hostname,
        port: base.port,
        method: out.method,
        path: out.path,
        headers: out.body ? { ...out.headers, 'content-length': Buffer.byteLength(out.body) } : out.headers,
        agent,
        timeout: TIMEOUT_MS,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(String(res.statusCode)));
        res.on('error', () => resolve('error'));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve('error'));
    req.end(out.body);
  });
}

interface Tally {
  sent: number;
  latencies: number[];
  statuses: Record<string, number>;
}

/**
 * At most `ratePerS`: the next request is due an interval after the last was due, or now if a full
 * line held it back (no catch-up burst, which could take an address past its rate limit).
 */
async function runStream(
  spec: PacedSpec,
  stream: PacedStream,
  seed: number,
  tally: Tally,
  deadline: number,
): Promise<void> {
  const base = new URL(spec.gateway);
  const random = generator(seed);
  const agents = stream.addresses.map(
    (localAddress) => new http.Agent({ keepAlive: true, localAddress, maxSockets: stream.concurrency }),
  );
  const interval = 1000 / stream.ratePerS;
  const inFlight = new Set<Promise<void>>();
  let due = performance.now();
  for (let i = 0; ; i++) {
    await sleep(Math.max(0, due - performance.now()));
    while (inFlight.size >= stream.concurrency) await Promise.race(inFlight);
    const now = performance.now();
    if (now >= deadline) break;
    due = Math.max(due, now) + interval;
    const agent = agents[i % agents.length] as http.Agent;
    const out = nextRequest(stream.request, i, random);
    tally.sent += 1;
    const started = performance.now();
    const done: Promise<void> = send(base, agent, out).then((status) => {
      tally.statuses[status] = (tally.statuses[status] ?? 0) + 1;
      if (status !== 'error') tally.latencies.push(performance.now() - started);
      inFlight.delete(done);
    });
    inFlight.add(done);
  }
  await Promise.all(inFlight);
  for (const agent of agents) agent.destroy();
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '{}') as PacedSpec;
  const tallies = new Map<string, Tally>();
  const started = performance.now();
  const deadline = started + spec.durationS * 1000;
  await Promise.all(
    spec.streams.map((stream, i) => {
      const tally = tallies.get(stream.name) ?? { sent: 0, latencies: [], statuses: {} };
      tallies.set(stream.name, tally);
      return runStream(spec, stream, spec.seed + i, tally, deadline);
    }),
  );
  const results: Record<string, PacedResult> = {};
  for (const [name, t] of tallies) {
    const ok = Object.entries(t.statuses).reduce((n, [status, count]) => n + (/^2/.test(status) ? count : 0), 0);
    results[name] = {
      sent: t.sent,
      rps: round(t.latencies.length / spec.durationS, 2),
      p50: round(t.latencies.length ? median(t.latencies) : 0, 1),
      p99: round(percentile(t.latencies, 0.99), 1),
      succeeded: t.sent ? round((ok / t.sent) * 100, 2) : 0,
      statuses: t.statuses,
    };
  }
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

void main();
