/**
 * Latency alone: one request at a time over one keep-alive connection, for a duration, timed to
 * the microsecond (autocannon's percentiles are whole milliseconds, coarser than a hop). Prints
 * `started` when the requests begin, then a LoadResult as JSON on stdout, as load.ts does.
 */
import { Agent, request } from 'node:http';
import type { LoadResult, LoadSpec } from './load';

function once(agent: Agent, spec: LoadSpec): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(spec.url, { method: spec.method ?? 'GET', headers: spec.headers, agent }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
      res.once('error', reject);
    });
    req.once('error', reject);
    req.end(spec.body);
  });
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  let unexpected = 0;
  let errors = 0;
  process.stdout.write('started\n');
  const cpuAtStart = process.cpuUsage();
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(spec.durationS * 1e9));
  while (process.hrtime.bigint() < end) {
    const t = process.hrtime.bigint();
    try {
      const status = await once(agent, spec);
      if (status !== (spec.expect ?? status) || (!spec.expect && (status < 200 || status > 299))) unexpected += 1;
      latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
    } catch {
      errors += 1;
    }
  }
  const elapsedS = Number(process.hrtime.bigint() - start) / 1e9;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (p: number) =>
    Math.round((latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0) * 1000) / 1000;
  const usage = process.cpuUsage(cpuAtStart);
  const out: LoadResult & { meanMs: number } = {
    requests: latencies.length,
    rps: latencies.length / elapsedS,
    p50: at(0.5),
    p99: at(0.99),
    meanMs: Math.round((latencies.reduce((n, x) => n + x, 0) / Math.max(1, latencies.length)) * 1000) / 1000,
    non2xx: unexpected,
    errors,
    timeouts: 0,
    cpuMs: (usage.user + usage.system) / 1000,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

void main();
