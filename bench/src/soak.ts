/**
 * `npm run soak`: promise 7 of the reliability issue. The whole system under mixed traffic, a
 * warm-up of four minutes, then ten minutes with every process's memory sampled: no process of
 * ours may grow more than 20% over those ten minutes, and no request may fail. Not part of CI
 * (it takes a quarter of an hour).
 * Writes bench/results/soak.{json,md}; exits 1 when a promise is broken.
 *
 * Memory is read two ways. RSS, from /proc: what the process holds, including the heap V8 has
 * reserved and not given back. And the live heap after each full collection, from V8's own
 * `--trace-gc` lines in the process's log: what the program still references, so a leak shows
 * there first and heap sizing does not show at all. The promise is judged on both.
 *
 * Knobs (environment): SOAK_MINUTES (10), SOAK_WARMUP_S (240), SOAK_WORKERS (8),
 * SOAK_SAMPLE_S (10), SOAK_OUT (bench/results).
 */

import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ensureTools,
  type ProcessName,
  prepareBucket,
  REPO_ROOT,
  type RunningServer,
  type RunningSystem,
  startMongo,
  startStorage,
  startSystem,
} from '@cs/devstack';
import { LIMITS_OFF } from './limits-off';
import { rssMb } from './rss';
import { Traffic } from './traffic';

/** The sampled time, after the warm-up. */
const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
/**
 * V8 sizes a process's old generation over its first few full collections under load, and the
 * busiest process (posts) does one a minute: in our runs its RSS reached its plateau about four
 * minutes in (167 MB at 3 min, 214 at 4, 214-216 until 10), with its live heap flat at 27 MB
 * throughout. Growth counts from after that.
 */
const WARMUP_S = Number(process.env.SOAK_WARMUP_S ?? 240);
const WORKERS = Number(process.env.SOAK_WORKERS ?? 8);
const SAMPLE_S = Number(process.env.SOAK_SAMPLE_S ?? 10);
const OUT = process.env.SOAK_OUT ?? join(REPO_ROOT, 'bench', 'results');
const MAX_GROWTH = 0.2;
const S3 = {
  accessKeyId: 'soakaccess',
  secretAccessKey: 'soaksecret-soaksecret',
  region: 'us-east-1',
  bucket: 'content-soak',
};

/** `Mark-Compact 45.2 (60.1) -> 30.5 (58.3) MB`: the heap in use after a full collection. */
const FULL_GC = /Mark-Compact(?: \(reduce\))? [\d.]+ \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB/g;

/** The live heap (MB) after each full collection a process has logged so far. */
function fullGcHeaps(logFile: string): number[] {
  try {
    return [...readFileSync(logFile, 'utf8').matchAll(FULL_GC)].map((m) => Number(m[1]));
  } catch {
    return [];
  }
}
/** The median of the last three samples: one sample caught mid-collection is not growth. */
const settled = (samples: number[]) => [...samples.slice(-3)].sort((a, b) => a - b)[1] ?? samples.at(-1) ?? 0;

async function main(): Promise<void> {
  const dataDir = join(REPO_ROOT, '.data', `soak-${process.pid}`);
  const owned: RunningServer[] = [];
  let system: RunningSystem | undefined;
  let failed = false;
  // Ctrl-C stops what was started, rather than leaving servers behind.
  const interrupt = async () => {
    await system?.stop();
    for (const server of owned) await server.stop().catch(() => undefined);
    process.exit(130);
  };
  process.once('SIGINT', () => void interrupt());
  process.once('SIGTERM', () => void interrupt());
  try {
    ensureTools();
    const [mongo, storage] = await Promise.all([
      startMongo({ dataDir, env: {} }),
      startStorage({ dataDir, ...S3, env: {} }),
    ]);
    owned.push(mongo, storage);
    await prepareBucket({ endpoint: storage.url, ...S3, corsOrigins: [] });
    system = await startSystem({
      dataDir,
      mongoUrl: mongo.url,
      storage: { endpoint: storage.url, ...S3 },
      jwtSecret: randomBytes(32).toString('hex'),
      env: { LOG_LEVEL: 'warn', ...LIMITS_OFF },
      nodeArgs: ['--trace-gc'],
    });

    const pids: Record<string, number> = Object.fromEntries(
      Object.values(system.processes).map((p) => [p.name, p.child.pid]),
    );
    if (mongo.child) pids.ferretdb = mongo.child.pid;
    if (storage.child) pids.versitygw = storage.child.pid;
    const processes = system.processes;
    const ours = Object.keys(processes) as ProcessName[];

    const traffic = new Traffic({ baseUrl: system.gatewayUrl, workers: WORKERS });
    await traffic.prepare();
    const started = Date.now();
    traffic.start();
    console.log(
      `soak: ${WORKERS} workers, ${WARMUP_S} s of warm-up, then ${MINUTES} min with memory sampled every ${SAMPLE_S} s`,
    );

    const samples: Record<string, number[]> = Object.fromEntries(Object.keys(pids).map((n) => [n, []]));
    const times: number[] = [];
    await sleep(WARMUP_S * 1000);
    const gcsAtWarmup = Object.fromEntries(ours.map((n) => [n, fullGcHeaps(processes[n].logFile).length]));
    while (Date.now() - started < WARMUP_S * 1000 + MINUTES * 60_000) {
      times.push(Math.round((Date.now() - started) / 1000));
      for (const [name, pid] of Object.entries(pids)) samples[name]?.push(rssMb(pid));
      const line = Object.entries(samples)
        .map(([n, s]) => `${n} ${s.at(-1)} MB`)
        .join(', ');
      console.log(`soak: ${times.at(-1)} s, ${traffic.outcomes.length} requests; ${line}`);
      await sleep(SAMPLE_S * 1000);
    }
    await traffic.stop();
    const elapsedS = (Date.now() - started) / 1000;
    const verified = await traffic.verify();

    const summary = Traffic.summarize(traffic.outcomes);
    const failures = traffic.outcomes.filter((o) => o.status < 200 || o.status >= 300).length;
    // Live heap: the first full collections after warm-up against the last ones of the run.
    const liveHeap = Object.fromEntries(
      ours.map((name) => {
        const heaps = fullGcHeaps(processes[name].logFile).slice(gcsAtWarmup[name] ?? 0);
        const first = settled(heaps.slice(0, 3));
        const end = settled(heaps);
        return [
          name,
          {
            fullGcs: heaps.length,
            afterWarmup: first,
            end,
            growth: first ? Math.round((end / first - 1) * 1000) / 10 : 0,
          },
        ];
      }),
    );
    const memory = Object.fromEntries(
      Object.entries(samples).map(([name, s]) => {
        const afterWarmup = settled(s.slice(0, 3));
        const end = settled(s);
        const peak = Math.max(...s);
        return [
          name,
          { afterWarmup, end, peak, growth: afterWarmup ? Math.round((end / afterWarmup - 1) * 1000) / 10 : 0 },
        ];
      }),
    );
    const broken = [
      ...ours
        .filter((n) => (memory[n]?.growth ?? 0) > MAX_GROWTH * 100)
        .map((n) => `${n} RSS grew ${memory[n]?.growth}%`),
      ...ours
        .filter((n) => (liveHeap[n]?.growth ?? 0) > MAX_GROWTH * 100)
        .map((n) => `${n} live heap grew ${liveHeap[n]?.growth}%`),
      ...(failures > 0 ? [`${failures} requests failed`] : []),
      ...verified.problems.slice(0, 10),
    ];
    failed = broken.length > 0;

    const report = {
      at: new Date().toISOString(),
      machine: `${cpus().length} cores, Node ${process.version}`,
      settings: { minutes: MINUTES, warmupS: WARMUP_S, workers: WORKERS, sampleS: SAMPLE_S },
      traffic: { ...summary, requestsPerSecond: Math.round(summary.requests / elapsedS) },
      writesVerified: verified.checked,
      memoryMb: memory,
      liveHeapMb: liveHeap,
      samples: { atS: times, ...samples },
      broken,
    };
    mkdirSync(OUT, { recursive: true });
    writeFileSync(join(OUT, 'soak.json'), `${JSON.stringify(report, null, 2)}\n`);
    const rows = Object.entries(memory).map(([n, m]) => {
      const h = liveHeap[n];
      const heap = h ? `${h.afterWarmup} | ${h.end} | ${h.growth}% (${h.fullGcs} full GCs)` : '– | – | –';
      return `| ${n}${n in processes ? '' : ' (not ours)'} | ${m.afterWarmup} | ${m.end} | ${m.peak} | ${m.growth}% | ${heap} |`;
    });
    writeFileSync(
      join(OUT, 'soak.md'),
      [
        '# Soak: figures',
        '',
        `Written by \`npm run soak\` at ${report.at} (${report.machine}). ${WORKERS} workers of mixed traffic`,
        `(bench/src/traffic.ts): ${WARMUP_S} s of warm-up, then ${MINUTES} min with memory sampled every ${SAMPLE_S} s.`,
        '',
        `- Requests: ${summary.requests} (${report.traffic.requestsPerSecond}/s); by status: ${JSON.stringify(summary.byStatus)}`,
        `- Latency: p50 ${summary.p50} ms, p99 ${summary.p99} ms, max ${summary.max} ms`,
        `- Writes read back afterwards, exactly as sent: ${verified.checked}, problems: ${verified.problems.length}`,
        `- Promise (no process of ours grows more than ${MAX_GROWTH * 100}%, no failed request): ${failed ? `BROKEN: ${broken.join('; ')}` : 'kept'}`,
        '',
        '| process | RSS after warm-up (MB) | RSS at the end | RSS peak | RSS growth | live heap after warm-up (MB) | live heap at the end | live heap growth |',
        '| --- | --- | --- | --- | --- | --- | --- | --- |',
        ...rows,
        '',
        'RSS at the end is the median of the last three samples. The live heap is what V8 reports',
        'in use after a full collection (`--trace-gc`): the median of the first three full collections',
        'after warm-up against the median of the last three. FerretDB and versitygw are measured for',
        'information only.',
        '',
      ].join('\n'),
    );
    console.log(`soak: ${failed ? `BROKEN: ${broken.join('; ')}` : 'kept'} → ${join(OUT, 'soak.md')}`);
  } finally {
    await system?.stop();
    for (const server of owned) await server.stop().catch(() => undefined);
    if (!process.env.KEEP_SOAK_DATA) rmSync(dataDir, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
