/**
 * One measurement, in a process of its own so the load never shares an event loop with what it
 * measures: autocannon against one URL, the summary printed as JSON on stdout.
 */
import autocannon from 'autocannon';
import { percentile } from './stats';

export interface LoadSpec {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  durationS: number;
  /** A non-2xx status that is the right answer here (304 for the cached read). */
  expect?: number;
  /** Headers of each request in turn, cycled through by every connection (many callers). */
  rotateHeaders?: Record<string, string>[];
  /**
   * p50 and p99 from every 2xx answer's own time, to the microsecond: autocannon's histogram keeps
   * whole milliseconds, too coarse for a read answered in one (scenario 14).
   */
  exactLatency?: boolean;
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** The load generator's own CPU time under load (it shares the machine's cores with what it measures). */
  cpuMs?: number;
}

/**
 * Written on stdout the moment the load begins, before the summary line, so that a caller can
 * time the loaded window alone (scale/measured.ts). Not exported: importing this file runs it.
 */
const STARTED = 'started';

const cpuMsOf = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000;

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
  process.stdout.write(`${STARTED}\n`);
  const cpuAtStart = process.cpuUsage();
  const times: number[] = [];
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        method: spec.method ?? 'GET',
        headers: spec.headers,
        body: spec.body,
        connections: spec.connections,
        ...(spec.rotateHeaders && { requests: spec.rotateHeaders.map((headers) => ({ headers })) }),
        duration: spec.durationS,
        pipelining: 1,
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    if (spec.exactLatency)
      instance.on('response', (_client, status, _bytes, ms) => {
        if (status >= 200 && status < 300) times.push(ms);
      });
  });
  const out: LoadResult = {
    requests: result.requests.total,
    rps: result.requests.total / spec.durationS,
    p50: spec.exactLatency ? Math.round(percentile(times, 0.5) * 1000) / 1000 : result.latency.p50,
    p99: spec.exactLatency ? Math.round(percentile(times, 0.99) * 1000) / 1000 : result.latency.p99,
    non2xx: result.non2xx - (spec.expect ? (result.statusCodeStats?.[String(spec.expect) as '304']?.count ?? 0) : 0),
    errors: result.errors,
    timeouts: result.timeouts,
    cpuMs: cpuMsOf(process.cpuUsage(cpuAtStart)),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

void main();
