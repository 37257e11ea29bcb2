/**
 * Scenario 13, live updates (issue 34), on a system of its own:
 * - idle streams: STREAMS (10,000, or what the gateway's descriptors allow) streams on `posts`
 *   through the gateway, from many loopback source addresses (127.0.1.x, at most 200 from each,
 *   open-streams.ts: under the gateway's per-address cap of 256). What they add to the gateway's and
 *   realtime's RSS, per stream: goal ≤ 20 kB in all.
 * - delivery: SUBSCRIBERS (1,000) streams on one tag, and 10 posts published a second through the
 *   gateway for DELIVERY_S; per post, the time from its publish's answer to its arrival at the
 *   last subscriber: goal p99 ≤ 100 ms.
 * - reads (a post by id) and writes (a post create) with SUBSCRIBERS streams open, against the
 *   same with none, interleaved rounds: goal ≥ 0.9 for each.
 *
 * The streams are opened by this process, raw (node:http), reading only what a measure needs.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { NODE_FLAGS } from '@cs/devstack';
import type { LoadResult, LoadSpec } from '../load';
import { openMany, type Stream } from '../open-streams';
import {
  interleave as interleaveRounds,
  runScript,
  type ScenarioOptions,
  startOwnSystem,
  summarize,
  type Variant,
} from '../rounds';
import { rssMb } from '../rss';
import { call } from '../seed-load';
import { pairedRatio, percentile, round } from '../stats';

/**
 * 10,000, or as many as one gateway can hold here: each stream is a client connection and an
 * upstream socket, and the gateway keeps its client connections to half its open-files limit
 * (less a reserve). A limit of 20,000 that cannot be raised (as in this project's CI) holds 9,872.
 */
const STREAMS = Number(process.env.BENCH_STREAMS ?? Math.min(10_000, gatewayStreamBudget() - 200));
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1_000);
const DELIVERY_S = Number(process.env.BENCH_DELIVERY_S ?? 20);
const POSTS_PER_S = 10;
export const REALTIME_GOAL = { bytesPerStream: 20_000, deliveryP99Ms: 100, withStreams: 0.9 } as const;

export type RealtimeOptions = ScenarioOptions;

export interface RealtimeReport {
  idle: {
    streams: number;
    gatewayKbPerStream: number;
    realtimeKbPerStream: number;
    kbPerStream: number;
    /** The same streams held by a bare node:http server (bare-streams.ts): Node's own share. */
    bareKbPerStream?: number;
  };
  /**
   * p50Ms, p99Ms, maxMs: from the publish's answer to the last subscriber (the goal's measure;
   * below 0 when every subscriber had it before the answer); fromSent…: from the publish being sent.
   */
  delivery: {
    subscribers: number;
    posts: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
    fromSentP50Ms?: number;
    fromSentP99Ms?: number;
    missed: number;
  };
  reads: { withStreams: number; none: number; ratio: number };
  writes: { withStreams: number; none: number; ratio: number };
}

/** The client connections one gateway takes, from the open-files limit it inherits from us. */
function gatewayStreamBudget(): number {
  const limits = readFileSync('/proc/self/limits', 'utf8');
  const openFiles = Number(/^Max open files\s+(\d+)/m.exec(limits)?.[1] ?? 1_000_000);
  return Math.floor((openFiles - 256) / 2);
}

/**
 * What STREAMS idle streams add to a bare node:http server's RSS (bare-streams.ts), measured as the
 * system's are: Node's own cost of a held response, under what the system's layers add.
 */
async function bareServerGrowthMb(o: RealtimeOptions): Promise<number> {
  const child = spawn(o.node, [...NODE_FLAGS, join(o.dist, 'bare-streams.js')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const port = await new Promise<string>((resolve, reject) => {
      child.stdout.once('data', (c: Buffer) => resolve(c.toString().trim()));
      child.once('exit', (code) => reject(new Error(`bare-streams exited ${code}`)));
    });
    const pid = child.pid ?? 0;
    await sleep(2_000);
    const before = rssMb(pid);
    const streams = await openMany(new URL(`http://127.0.0.1:${port}`), '/', STREAMS);
    await sleep(5_000);
    const grown = rssMb(pid) - before;
    for (const s of streams) s.close();
    return grown;
  } finally {
    child.kill();
  }
}

export async function runRealtime(o: RealtimeOptions): Promise<RealtimeReport> {
  const { system, token } = await startOwnSystem(o, 'live');
  const gateway = new URL(system.gatewayUrl);

  // Idle streams: the RSS they add, once settled.
  const pids = { gateway: system.processes.gateway.child.pid, realtime: system.processes.realtime.child.pid };
  await sleep(2_000);
  const before = { gateway: rssMb(pids.gateway), realtime: rssMb(pids.realtime) };
  o.log(`bench: 13 realtime: opening ${STREAMS} idle streams…`);
  const idle = await openMany(gateway, '/api/realtime?topics=posts&tag=idle', STREAMS);
  await sleep(5_000);
  const after = { gateway: rssMb(pids.gateway), realtime: rssMb(pids.realtime) };
  for (const s of idle) s.close();
  const kb = (mb: number) => round((mb * 1024) / STREAMS, 2);
  const bareKb = kb(await bareServerGrowthMb(o));
  // In one process (the default) the gateway is realtime: its growth is counted once.
  const gatewayKb = kb(after.gateway - before.gateway);
  const realtimeKb = pids.realtime === pids.gateway ? 0 : kb(after.realtime - before.realtime);
  await sleep(3_000);

  // Delivery: the arrival of each post at each subscriber.
  const tag = `live${process.pid}`;
  const arrivals = new Map<string, number[]>();
  const buffers: string[] = [];
  const onData = (i: number, text: string) => {
    const at = Date.now();
    const buffered = (buffers[i] ?? '') + text;
    const end = buffered.lastIndexOf('\n\n');
    const complete = end === -1 ? '' : buffered.slice(0, end);
    buffers[i] = end === -1 ? buffered : buffered.slice(end + 2);
    for (let k = complete.indexOf('"_id":"'); k !== -1; k = complete.indexOf('"_id":"', k + 1)) {
      const id = complete.slice(k + 7, k + 31);
      const seen = arrivals.get(id);
      if (seen) seen.push(at);
      else arrivals.set(id, [at]);
    }
  };
  o.log(`bench: 13 realtime: ${SUBSCRIBERS} subscribers, ${POSTS_PER_S} posts a second for ${DELIVERY_S} s…`);
  const subscribers = await openMany(gateway, `/api/realtime?topics=posts&tag=${tag}`, SUBSCRIBERS, onData);
  const answered = new Map<string, number>();
  /** When each publish was sent: a publish answers FRESH_MS after its change is logged (posts' listing), often after its event arrived. */
  const sent = new Map<string, number>();
  const publishing: Promise<void>[] = [];
  const startedAt = Date.now();
  for (let n = 0; n < DELIVERY_S * POSTS_PER_S; n++) {
    await sleep(Math.max(0, startedAt + (n * 1000) / POSTS_PER_S - Date.now()));
    publishing.push(
      (async () => {
        const draft = await call(`${system.gatewayUrl}/api/posts`, 'POST', token, {
          title: `Live ${n}`,
          body: 'A post for the subscribers.',
          tags: [tag],
        });
        sent.set(String(draft._id), Date.now());
        await call(`${system.gatewayUrl}/api/posts/${draft._id}`, 'PUT', token, { status: 'published' });
        answered.set(String(draft._id), Date.now());
      })(),
    );
  }
  await Promise.all(publishing);
  await sleep(2_000);
  const lastArrival: number[] = [];
  const lastFromSent: number[] = [];
  let missed = 0;
  for (const [id, at] of answered) {
    const seen = arrivals.get(id) ?? [];
    missed += SUBSCRIBERS - seen.length;
    if (seen.length > 0) {
      lastArrival.push(Math.max(...seen) - at);
      lastFromSent.push(Math.max(...seen) - (sent.get(id) ?? at));
    }
  }

  // Reads and writes, with the subscribers' streams open and with none.
  const readPost = await call(`${system.gatewayUrl}/api/posts`, 'POST', token, { title: 'Read', body: 'Read by id.' });
  let open: Stream[] | undefined = subscribers;
  // Either way the round starts a second after the change, so that it measures the work with the
  // streams open (or none), not their opening or closing.
  const streams = async (wanted: boolean) => {
    if (wanted === (open !== undefined)) return;
    if (wanted) open = await openMany(gateway, `/api/realtime?topics=posts&tag=${tag}`, SUBSCRIBERS);
    else {
      for (const s of open ?? []) s.close();
      open = undefined;
    }
    await sleep(1_000);
  };
  const child = (script: string, spec: unknown) => runScript(o.node, o.dist, script, [JSON.stringify(spec)]);
  const read = () =>
    child('load.js', {
      url: `${system.gatewayUrl}/api/posts/${readPost._id}`,
      headers: { authorization: `Bearer ${token}` },
      connections: o.connections,
      durationS: o.durationS,
    } satisfies LoadSpec);
  const write = () =>
    child('write-load.js', {
      url: system.gatewayUrl,
      connections: o.connections,
      durationS: o.durationS,
      mode: 'create',
      token,
    });
  const variants = (run: () => Promise<LoadResult>): Variant<LoadResult>[] => [
    {
      name: 'with',
      run: async () => {
        await streams(true);
        return run();
      },
    },
    {
      name: 'none',
      run: async () => {
        await streams(false);
        return run();
      },
    },
  ];
  const reads = await interleaveRounds(variants(read), o.rounds);
  const writes = await interleaveRounds(variants(write), o.rounds);
  await streams(false);
  const pair = (r: Record<string, LoadResult[]>) => ({
    withStreams: round(summarize(r.with ?? []).rps),
    none: round(summarize(r.none ?? []).rps),
    ratio: pairedRatio(
      (r.with ?? []).map((x) => x.rps),
      (r.none ?? []).map((x) => x.rps),
    ),
  });

  return {
    idle: {
      streams: STREAMS,
      gatewayKbPerStream: gatewayKb,
      realtimeKbPerStream: realtimeKb,
      kbPerStream: round(gatewayKb + realtimeKb, 2),
      bareKbPerStream: bareKb,
    },
    delivery: {
      subscribers: SUBSCRIBERS,
      posts: answered.size,
      p50Ms: round(percentile(lastArrival, 0.5)),
      p99Ms: round(percentile(lastArrival, 0.99)),
      maxMs: round(Math.max(...lastArrival)),
      fromSentP50Ms: round(percentile(lastFromSent, 0.5)),
      fromSentP99Ms: round(percentile(lastFromSent, 0.99)),
      missed,
    },
    reads: pair(reads),
    writes: pair(writes),
  };
}

/** The report's rows: scenario, measured, ratio, goal. */
export function realtimeRows(r: RealtimeReport): [string, string, string, string][] {
  return [
    [
      `13 ${r.idle.streams} idle streams through the gateway: memory per stream`,
      `gateway ${r.idle.gatewayKbPerStream} kB + realtime ${r.idle.realtimeKbPerStream} kB (RSS)${r.idle.bareKbPerStream === undefined ? '' : `; a bare node:http server holding the same: ${r.idle.bareKbPerStream} kB`}`,
      `${r.idle.kbPerStream} kB`,
      `≤ ${REALTIME_GOAL.bytesPerStream / 1000} kB`,
    ],
    [
      `13 delivery to ${r.delivery.subscribers} subscribers, ${POSTS_PER_S} posts/s: publish answered → last subscriber`,
      `${r.delivery.posts} posts; p50 ${r.delivery.p50Ms} ms, max ${r.delivery.maxMs} ms${r.delivery.fromSentP99Ms === undefined ? '' : ` (from the publish sent: p50 ${r.delivery.fromSentP50Ms} ms, p99 ${r.delivery.fromSentP99Ms} ms)`}; ${r.delivery.missed} deliveries missed`,
      `p99 ${r.delivery.p99Ms} ms`,
      `≤ ${REALTIME_GOAL.deliveryP99Ms} ms`,
    ],
    [
      `13 read by id with ${SUBSCRIBERS} streams open vs none`,
      `${r.reads.withStreams} vs ${r.reads.none} req/s`,
      String(r.reads.ratio),
      `≥ ${REALTIME_GOAL.withStreams}`,
    ],
    [
      `13 post create with ${SUBSCRIBERS} streams open vs none`,
      `${r.writes.withStreams} vs ${r.writes.none} req/s`,
      String(r.writes.ratio),
      `≥ ${REALTIME_GOAL.withStreams}`,
    ],
  ];
}
