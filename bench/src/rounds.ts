/**
 * How the scenarios measure: each load in a process of its own (load.js and the other scripts,
 * which print their result as their last line of output), and the variants of a comparison
 * interleaved round by round, so that a drift over the run falls on both.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { type RunningSystem, type SystemOptions, startSystem } from '@cs/devstack';
import { LIMITS_OFF } from './limits-off';
import type { LoadResult } from './load';
import { median } from './stats';

/** Runs `<dist>/<script>` with `args` under `node`, and answers its last line of output, parsed. */
export function runScript<T = LoadResult>(node: string, dist: string, script: string, args: string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, [join(dist, script), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`${script} exited ${code}`));
      resolve(JSON.parse(out.trim().split('\n').pop() ?? '{}') as T);
    });
  });
}

export interface Variant<T> {
  name: string;
  run: () => Promise<T>;
}

/** Runs the variants round after round, alternating which goes first: each one's results, in order. */
export async function interleave<T>(variants: Variant<T>[], rounds: number): Promise<Record<string, T[]>> {
  const results: Record<string, T[]> = Object.fromEntries(variants.map((v) => [v.name, []]));
  for (let r = 0; r < rounds; r++) {
    for (const v of r % 2 === 0 ? variants : [...variants].reverse()) results[v.name]?.push(await v.run());
  }
  return results;
}

export interface LoadSummary {
  rps: number;
  p50: number;
  p99: number;
  /** Answers other than 2xx, errors and timeouts, over every round. */
  failures: number;
  /** Each round's requests a second. */
  rounds: number[];
}

/** The medians of a variant's rounds. */
export function summarize(rs: LoadResult[]): LoadSummary {
  return {
    rps: median(rs.map((x) => x.rps)),
    p50: median(rs.map((x) => x.p50)),
    p99: median(rs.map((x) => x.p99)),
    failures: rs.reduce((n, x) => n + (x.non2xx ?? 0) + (x.errors ?? 0) + (x.timeouts ?? 0), 0),
    rounds: rs.map((x) => Math.round(x.rps)),
  };
}

/** What a scenario run on systems of its own (sessions, realtime) is given by the run. */
export interface ScenarioOptions {
  dataDir: string;
  mongoUrl: string;
  storage: SystemOptions['storage'];
  jwtSecret: string;
  dbPrefix: string;
  dist: string;
  node: string;
  rounds: number;
  durationS: number;
  connections: number;
  own(stoppable: { stop(): Promise<unknown> }): void;
  log(line: string): void;
}

/**
 * A scenario's own system, in the default mode (every part in one process), quiet logs, the
 * limits off, and one user registered (bcrypt cost 4: no measured request hashes a password).
 */
export async function startOwnSystem(
  o: ScenarioOptions,
  who: string,
): Promise<{ system: RunningSystem; token: string }> {
  const system = await startSystem({
    dataDir: o.dataDir,
    mongoUrl: o.mongoUrl,
    storage: o.storage,
    jwtSecret: o.jwtSecret,
    dbPrefix: o.dbPrefix,
    env: { LOG_LEVEL: 'warn', ...LIMITS_OFF, BCRYPT_COST: '4' },
  });
  o.own(system);
  const registered = await fetch(`${system.gatewayUrl}/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `${who}-${process.pid}@example.com`, password: 'bench-password' }),
  });
  if (!registered.ok) throw new Error(`register ${who}: ${registered.status} ${await registered.text()}`);
  const { token } = (await registered.json()) as { token: string };
  return { system, token };
}
