/**
 * Writes that each change what the next one sends, in a process of its own: `refresh` spends a
 * session's refresh token and keeps the successor (each connection cycling through its own
 * sessions, so no session passes identity's refresh limit), `create` posts a new post. The same
 * loop for both, so their figures compare. Prints a LoadResult as JSON.
 *
 *   node write-load.js '{"mode":"refresh","url":…,"connections":10,"durationS":4,"tokensFile":…}'
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { LoadResult } from './load';
import { percentile } from './stats';

interface WriteSpec {
  mode: 'refresh' | 'create';
  /** The gateway. */
  url: string;
  connections: number;
  durationS: number;
  /** refresh: a JSON array of refresh tokens, written back with their successors at the end. */
  tokensFile?: string;
  /** create: the access token of the author. */
  token?: string;
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '{}') as WriteSpec;
  const tokens = spec.tokensFile ? (JSON.parse(readFileSync(spec.tokensFile, 'utf8')) as string[]) : [];
  const latencies: number[] = [];
  let failures = 0;
  const deadline = Date.now() + spec.durationS * 1000;
  const cpuAtStart = process.cpuUsage();

  const send = async (slot: number) => {
    const started = performance.now();
    const res =
      spec.mode === 'refresh'
        ? await fetch(`${spec.url}/api/auth/refresh`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ refreshToken: tokens[slot] }),
          })
        : await fetch(`${spec.url}/api/posts`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${spec.token}` },
            body: JSON.stringify({ title: 'A bench post', body: 'Written by the write-load benchmark.' }),
          });
    const body = (await res.json().catch(() => undefined)) as { refreshToken?: string } | undefined;
    if (!res.ok) {
      failures += 1;
      return;
    }
    latencies.push(performance.now() - started);
    if (spec.mode === 'refresh' && body?.refreshToken) tokens[slot] = body.refreshToken;
  };

  await Promise.all(
    Array.from({ length: spec.connections }, async (_, c) => {
      // Connection c uses the sessions c, c + connections, c + 2·connections… in turn.
      const mine = tokens.map((_, i) => i).filter((i) => i % spec.connections === c);
      for (let n = 0; Date.now() < deadline; n++) {
        await send(spec.mode === 'refresh' ? (mine[n % mine.length] as number) : 0).catch(() => {
          failures += 1;
        });
      }
    }),
  );
  if (spec.tokensFile) writeFileSync(spec.tokensFile, JSON.stringify(tokens));
  const cpu = process.cpuUsage(cpuAtStart);
  const result: LoadResult = {
    requests: latencies.length,
    rps: latencies.length / spec.durationS,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    non2xx: failures,
    errors: 0,
    timeouts: 0,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

void main().catch((err) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
