/**
 * Requests at a fixed pace, in a process of its own (as load.ts, so the load never shares an event
 * loop with what it measures): each stream sends at most `ratePerS` a second with at most
 * `concurrency` in flight, from its own loopback source addresses (the gateway counts its rate
 * limits and the services take turns per client address). Every status is counted and every
 * latency kept; the summary per stream name is printed as JSON on stdout.
 *
 * What a stream sends is described in the spec, so that attacks/ says everything in one place;
 * the choices that vary (a list page, an unknown e-mail) come from a seeded generator, so a run
 * sends the same requests as the last.
 */

import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PacedRequest, PacedResult, PacedSpec, PacedStream } from './paced-spec';
import { median, percentile, round } from './stats';

/** The `n`th address of loopback block `block` (127.block.y.z, z in 1..254). */
export function freshAddress(block: number, n: number): string {
  const y = Math.floor(n / 254);
  if (y > 255) throw new Error(`fresh addresses of 127.${block}: ${n} is past the last`);
  return `127.${block}.${y}.${1 + (n % 254)}`;
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
  /** A second request once the first answered 2xx, given the first's answer (create and publish). */
  followUp?: (answer: string) => Outgoing;
  /** Read a stream this long after its headers, then close it. */
  readMs?: number;
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
    case 'create and publish': {
      const headers = { ...json, ...request.headers };
      const title = `Imported post ${i} of ${Math.floor(random() * 1e12).toString(36)}`;
      return {
        method: 'POST',
        path: '/api/posts',
        headers,
        body: JSON.stringify({ title, body: `The body of ${title}, as an import writes it.`, tags: [request.tag] }),
        followUp: (answer) => ({
          method: 'PUT',
          path: `/api/posts/${String((JSON.parse(answer) as { _id?: string })._id)}`,
          headers,
          body: JSON.stringify({ status: 'published' }),
        }),
      };
    }
    case 'note update':
      return {
        method: 'PUT',
        path: request.path,
        headers: { ...json, ...request.headers },
        body: JSON.stringify({ title: `Update ${i}`, body: 'x'.repeat(request.bodyBytes) }),
      };
    case 'stream briefly':
      return { method: 'GET', path: request.path, headers: request.headers ?? {}, readMs: request.readMs };
  }
}

/** Where a request goes out from: a keep-alive agent's connections, or a connection of its own from an address. */
type Via = { agent: http.Agent } | { agent: false; localAddress: string };

/** One request; its status, or `error` with no answer (and, for `followUp`, the answer's body). */
function sendOne(base: URL, via: Via, out: Outgoing): Promise<{ status: string; body: string }> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: base.hostname,
        port: base.port,
        method: out.method,
        path: out.path,
        headers: out.body ? { ...out.headers, 'content-length': Buffer.byteLength(out.body) } : out.headers,
        ...via,
        timeout: TIMEOUT_MS,
      },
      (res) => {
        const status = String(res.statusCode);
        if (out.readMs !== undefined) {
          // A stream: read it a while, then go (its headers were the answer timed).
          res.resume();
          const close = setTimeout(() => res.destroy(), out.readMs);
          res.on('close', () => clearTimeout(close));
          resolve({ status, body: '' });
          return;
        }
        const chunks: Buffer[] = [];
        if (out.followUp) res.on('data', (c: Buffer) => chunks.push(c));
        else res.resume();
        res.on('end', () => resolve({ status, body: Buffer.concat(chunks).toString() }));
        res.on('error', () => resolve({ status: 'error', body: '' }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 'error', body: '' }));
    req.end(out.body);
  });
}

/** A request, and its follow-up when it has one and the first succeeded: the status that counts. */
async function send(base: URL, via: Via, out: Outgoing): Promise<string> {
  const first = await sendOne(base, via, out);
  if (!out.followUp || !/^2/.test(first.status)) return first.status;
  return (await sendOne(base, via, out.followUp(first.body))).status;
}

interface Tally {
  sent: number;
  /** When its last request was answered (ms of performance.now()). */
  lastAt: number;
  /** Whether a stream of its stopped at its `total` before the run's end. */
  capped: boolean;
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
  const { fresh } = stream;
  const via = (i: number): Via =>
    fresh
      ? { agent: false, localAddress: freshAddress(fresh.block, Math.floor(i / fresh.perAddress)) }
      : { agent: agents[i % agents.length] as http.Agent };
  const interval = 1000 / stream.ratePerS;
  const inFlight = new Set<Promise<void>>();
  let due = performance.now();
  for (let i = 0; ; i++) {
    await sleep(Math.max(0, due - performance.now()));
    while (inFlight.size >= stream.concurrency) await Promise.race(inFlight);
    const now = performance.now();
    if (now >= deadline) break;
    if (i >= (stream.total ?? Number.POSITIVE_INFINITY)) {
      tally.capped = true;
      break;
    }
    due = Math.max(due, now) + interval;
    const out = nextRequest(stream.request, i, random);
    tally.sent += 1;
    const started = performance.now();
    const done: Promise<void> = send(base, via(i), out).then((status) => {
      tally.statuses[status] = (tally.statuses[status] ?? 0) + 1;
      tally.lastAt = performance.now();
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
      const tally = tallies.get(stream.name) ?? { sent: 0, lastAt: 0, capped: false, latencies: [], statuses: {} };
      tallies.set(stream.name, tally);
      return runStream(spec, stream, spec.seed + i, tally, deadline);
    }),
  );
  const results: Record<string, PacedResult> = {};
  for (const [name, t] of tallies) {
    const ok = Object.entries(t.statuses).reduce((n, [status, count]) => n + (/^2/.test(status) ? count : 0), 0);
    const seconds = t.capped ? Math.max(0.001, (t.lastAt - started) / 1000) : spec.durationS;
    results[name] = {
      sent: t.sent,
      rps: round(t.latencies.length / seconds, 2),
      seconds: round(seconds, 1),
      p50: round(t.latencies.length ? median(t.latencies) : 0, 1),
      p99: round(percentile(t.latencies, 0.99), 1),
      succeeded: t.sent ? round((ok / t.sent) * 100, 2) : 0,
      statuses: t.statuses,
    };
  }
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

void main();
