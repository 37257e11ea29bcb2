/**
 * One measurement, in a process of its own so the load never shares an event loop with what it
 * measures: autocannon against one URL, the summary printed as JSON on stdout.
 */
import autocannon from 'autocannon';

export interface LoadSpec {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  durationS: number;
  /** A non-2xx status that is the right answer here (304 for the cached read). */
  expect?: number;
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
  const result = await autocannon({
    url: spec.url,
    method: spec.method ?? 'GET',
    headers: spec.headers,
    body: spec.body,
    connections: spec.connections,
    duration: spec.durationS,
    pipelining: 1,
  });
  const out: LoadResult = {
    requests: result.requests.total,
    rps: result.requests.total / spec.durationS,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx - (spec.expect ? (result.statusCodeStats?.[String(spec.expect) as '304']?.count ?? 0) : 0),
    errors: result.errors,
    timeouts: result.timeouts,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

void main();
