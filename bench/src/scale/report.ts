/** The scale run's report as a table: bench/results/scale.md. */
import type { Report } from '../report-json';
import { round } from '../stats';
import { reading, shared } from './reading';
import { TIERS } from './settings';

const ROUTE_NAMES: Record<string, string> = {
  read: '`GET /api/posts` (public list)',
  write: '`POST /api/posts` (Bearer token)',
};

export function markdown(r: Report): string {
  const m = r.machine;
  const n = r.settings.replicas;
  const s = r.scale.routes;
  // autocannon's percentiles are whole milliseconds; one-at-a-time.js's, microseconds.
  const ms = (x: number) => (x >= 10 || Number.isInteger(x) ? x.toFixed(0) : x.toFixed(2));
  /** One row of a with/without table: each side's req/s and latencies, the ratio, the p50 added. */
  const pairRow = (label: string, without: Report, withIt: Report) =>
    `| ${label} | ${without.rps.toFixed(0)} req/s, p50 ${ms(without.p50)} ms, p99 ${ms(without.p99)} ms | ${withIt.rps.toFixed(0)} req/s, p50 ${ms(withIt.p50)} ms, p99 ${ms(withIt.p99)} ms | ${round(withIt.rps / without.rps, 3)} | ${round(withIt.p50 - without.p50, 3)} ms |`;
  const lines: string[] = [
    `# Scale-out benchmark ${r.when}`,
    '',
    `${m.cores} cores (${m.cpu}), ${m.memoryGb} GB, Node ${m.node}; MongoDB protocol: ${m.mongo}; S3: ${m.storage}. Load average before the run ${m.loadAverageBefore.join(', ')}, after ${m.loadAverageAfter.join(', ')}.`,
    '',
    ...shared(r),
    `Each figure is the median of ${r.settings.rounds} interleaved rounds of ${r.settings.durationS} s (the configurations loaded in turn, never together, the order flipped every round), after ${r.settings.warmupS} s of warm-up per route and system; ${r.settings.connections} connections unless said. Whole run ${r.durationS} s. Produced by \`npm run bench:scale\` (bench/src/scale.ts); the figures are in scale.json.`,
    '',
    '## Throughput at 1 and at 2 replicas of every process',
    '',
    `Every service and the gateway at 1 replica, then at ${n}, both behind HAProxy, on the same database. The ratio is the median of the round-by-round ratios.`,
    '',
    `| route | 1 replica each | ${n} replicas each | ratio | p50 / p99, 1 → ${n} | failed |`,
    '|---|---|---|---|---|---|',
    ...(['read', 'write'] as const).map((route) => {
      const [a, b] = [s[route]['1'], s[route][n]];
      return `| ${ROUTE_NAMES[route]} | ${a.rps.toFixed(0)} req/s | ${b.rps.toFixed(0)} req/s | **${r.scale.ratios[route]}** | ${a.p50} / ${a.p99} ms → ${b.p50} / ${b.p99} ms | ${a.failures + b.failures} |`;
    }),
    '',
    '### Where the CPU went, in cores busy over the loaded window',
    '',
    `/proc/<pid>/stat (utime + stime, and for PostgreSQL every backend) read when the load starts and when it ends; "others" is the machine's busy time (/proc/stat) that none of the listed processes account for: the idle system's health checks, the kernel, and other people's work on a shared machine. The machine has ${m.cores} cores.`,
    '',
    `| route, replicas | ${TIERS.filter((t) => t !== 'redis').join(' | ')} | load generator | others | machine |`,
    `|---|${TIERS.filter((t) => t !== 'redis')
      .map(() => '---')
      .join('|')}|---|---|---|`,
    ...(['read', 'write'] as const).flatMap((route) =>
      ['1', String(n)].map((k) => {
        const x = s[route][k];
        const cell = (g: string) => (x.cores[g] === undefined ? '–' : x.cores[g].toFixed(2));
        return `| ${route}, ${k} | ${TIERS.filter((t) => t !== 'redis')
          .map(cell)
          .join(
            ' | ',
          )} | ${cell('load generator')} | ${x.otherCores.toFixed(2)} | **${x.machineBusyCores.toFixed(2)}** |`;
      }),
    ),
    '',
    '### CPU-ms per request, per kind of process',
    '',
    "Each group's CPU time over the window divided by the requests served in it (a kind's replicas summed).",
    '',
    `| route, replicas | ${TIERS.filter((t) => t !== 'redis').join(' | ')} | total of the system | load generator |`,
    `|---|${TIERS.filter((t) => t !== 'redis')
      .map(() => '---')
      .join('|')}|---|---|`,
    ...(['read', 'write'] as const).flatMap((route) =>
      ['1', String(n)].map((k) => {
        const x = s[route][k].cpuMsPerRequest;
        const system = TIERS.reduce((sum, g) => sum + (x[g] ?? 0), 0);
        const cell = (g: string) => (x[g] === undefined ? '–' : x[g].toFixed(3));
        return `| ${route}, ${k} | ${TIERS.filter((t) => t !== 'redis')
          .map(cell)
          .join(' | ')} | **${system.toFixed(3)}** | ${cell('load generator')} |`;
      }),
    ),
    '',
    `Requests the balancer sent to each replica at ${n} (all rounds): ${(['read', 'write'] as const)
      .map(
        (route) =>
          `${route}: gateway ${(s[route][n].perReplica?.gateway ?? []).join(' / ')}, posts ${(s[route][n].perReplica?.posts ?? []).join(' / ')}`,
      )
      .join('; ')}.`,
    '',
    ...reading(r),
    '## What N replicas on N machines would reach: an estimate',
    '',
    "**Model.** N machines, each running one replica of every kind of process; one balancer and one database (FerretDB + PostgreSQL) shared by all, each of those on a machine with as many cores as this one. A replica is one Node event loop, so it uses one core at most: a kind saturates at N × 1000 / (its CPU-ms per request), and the first kind to saturate is the one with the highest cost. The balancer and the database cap the total at cores × 1000 / (their CPU-ms per request). **Assumptions:** the per-request CPU costs measured at 1 replica here hold on other machines (same CPU, a warm process, no extra cost from the network between machines); each machine has a core for each busy replica (gateway and posts); the database's cost per request stays the same as it gets busier (no lock or I/O contention, same data size); clients are elsewhere (the load generator's CPU is left out). FerretDB's CPU is not MongoDB's: on MongoDB the database ceiling would be another figure.",
    '',
    '| route | first tier to saturate | its CPU-ms/request | per machine | database CPU-ms/request → ceiling | balancer CPU-ms/request → ceiling | N = 1 | 2 | 4 | 8 | 16 | machines to reach the database ceiling |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...(['read', 'write'] as const).map((route) => {
      const e = r.estimate[route];
      const ceiling = (cost: number, rps?: number) => (rps ? `${cost} → ${rps} req/s` : 'not measured');
      return `| ${ROUTE_NAMES[route]} | ${e.firstTier} | ${e.firstTierCpuMsPerRequest} | ${e.perMachineRps} req/s | ${ceiling(e.databaseCpuMsPerRequest, e.databaseCeilingRps)} | ${ceiling(e.balancerCpuMsPerRequest, e.balancerCeilingRps)} | ${e.at.map((x: Report) => `${x.rps}${x.limitedBy === `${e.firstTier} replicas` ? '' : ` (${x.limitedBy})`}`).join(' | ')} | ${e.machinesToDatabaseCeiling ?? '–'} |`;
    }),
    '',
    `"Per machine" is 1000 / the first tier's cost; a machine with one core for all its replicas would reach ${(['read', 'write'] as const).map((route) => `${r.estimate[route].perOneCoreMachineRps} req/s (${route})`).join(' and ')} instead (1000 / the Node processes' costs summed).`,
    '',
    '## The balancer hop',
    '',
    'The same system shape, 1 replica of each kind, with HAProxy in front of every kind (`balanced: true`) and without: a request to the public list crosses the balancer twice (client → gateway, gateway → posts). At 1 connection the latencies come from a client of our own, timed to the microsecond, one request at a time over one keep-alive connection.',
    '',
    '| connections | without balancer | with balancer | ratio of req/s | p50 added |',
    '|---|---|---|---|---|',
    ...Object.keys(r.balancerHop)
      .sort((a, b) => Number(b) - Number(a))
      .map((k) => pairRow(k, r.balancerHop[k].direct, r.balancerHop[k].balanced)),
    '',
    (() => {
      const [fixed, single] = [r.balancerHop[String(r.settings.connections)], r.balancerHop['1']];
      return `One request at a time, the two crossings of HAProxy add ${round(single.balanced.p50 - single.direct.p50, 3)} ms at p50 (mean ${round(single.balanced.meanMs - single.direct.meanMs, 3)} ms). At ${r.settings.connections} connections the balanced system served ${round(fixed.balanced.rps / fixed.direct.rps, 3)} of the direct one's requests a second; HAProxy took ${fixed.balanced.cpuMsPerRequest.haproxy} CPU-ms per request (${fixed.balanced.cores.haproxy} cores) from the same ${r.machine.cores} cores as everything else, which on a machine of its own it would not.`;
    })(),
    '',
    '## Redis on the auth route',
    '',
    "`POST /api/auth/login` with an empty body, 1 replica of each kind, no balancer: the gateway's auth limit counts the request (in Redis, `REDIS_URL`, or in its own memory), then identity answers 400 before any bcrypt. The limit is set far above the run's requests, so nothing is refused.",
    '',
    '| connections | limit in memory | limit in Redis | ratio of req/s | p50 added |',
    '|---|---|---|---|---|',
    ...Object.keys(r.redisOnAuth)
      .filter((k) => /^\d+$/.test(k))
      .sort((a, b) => Number(b) - Number(a))
      .map((k) => pairRow(k, r.redisOnAuth[k].memory, r.redisOnAuth[k].redis)),
    '',
    (() => {
      const c = r.redisOnAuth.limiterCheck;
      const fixed = r.redisOnAuth[String(r.settings.connections)];
      const single = r.redisOnAuth['1'];
      return `One request at a time, counting in Redis (one round trip from the gateway per request) adds ${round(single.redis.p50 - single.memory.p50, 3)} ms at p50 (mean ${round(single.redis.meanMs - single.memory.meanMs, 3)} ms). Checked: every request passed the limiter. In memory it had counted ${c.memory.counted} requests (RateLimit header) for ${c.memory.served} measured; Redis held ${c.redis.inRedis} under ${c.redis.keys} key(s) for ${c.redis.served} measured (the rest are the warm-up's and the probes'). CPU per request at ${r.settings.connections} connections: gateway ${fixed.memory.cpuMsPerRequest.gateway} ms in memory, ${fixed.redis.cpuMsPerRequest.gateway} ms with Redis, plus Redis itself ${fixed.redis.cpuMsPerRequest.redis ?? '–'} ms.`;
    })(),
    '',
  ];
  return lines.join('\n');
}
