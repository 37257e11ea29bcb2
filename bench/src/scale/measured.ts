/**
 * How the scale run measures: a load with the CPU time of every process of the system under it,
 * and what a variant's rounds come to.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { MongoServer, RunningServer, RunningSystem } from '@cs/devstack';
import { type CpuSnapshot, type CpuWindow, cpuBetween, cpuSnapshot, type ProcessGroups } from '../cpu';
import type { LoadResult, LoadSpec } from '../load';
import { interleave as interleaveRounds, type Variant } from '../rounds';
import { median, round } from '../stats';
import { DIST, DURATION_S, NODE, type NODE_KINDS, ROUNDS } from './settings';

/** A system under test and the processes whose CPU time its windows count. */
export interface Target {
  url: string;
  system: RunningSystem;
  groups: ProcessGroups;
}

export interface Measured extends LoadResult {
  window: CpuWindow;
  /** Requests the balancer sent to each replica of a kind during the window. */
  perReplica?: Record<string, number[]>;
}

/**
 * One load in a process of its own (load.js: autocannon; one-at-a-time.js), with a CPU snapshot
 * when it prints `started` and another when its summary arrives: the window is the load alone.
 */
export function measured(target: Target, script: string, spec: Omit<LoadSpec, 'durationS'>, durationS = DURATION_S) {
  return new Promise<Measured>((resolve, reject) => {
    const child = spawn(NODE, [join(DIST, script), JSON.stringify({ ...spec, durationS })], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let before: CpuSnapshot | undefined;
    let after: CpuSnapshot | undefined;
    let statsBefore: Promise<Record<string, { requests: number }[]> | undefined> = Promise.resolve(undefined);
    let buffered = '';
    let result: LoadResult | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let newline = buffered.indexOf('\n');
      while (newline !== -1) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line === 'started') {
          before = cpuSnapshot(target.groups);
          statsBefore = target.system.balancer?.stats() ?? Promise.resolve(undefined);
        } else if (line.startsWith('{')) {
          after = cpuSnapshot(target.groups);
          result = JSON.parse(line) as LoadResult;
        }
        newline = buffered.indexOf('\n');
      }
    });
    child.on('exit', async (code) => {
      if (code !== 0 || !result || !before || !after) return reject(new Error(`${script} exited ${code}`));
      const window = cpuBetween(before, after);
      window.cpuMs['load generator'] = result.cpuMs ?? 0;
      const [then, now] = [await statsBefore, await target.system.balancer?.stats()];
      const perReplica =
        then && now
          ? Object.fromEntries(
              Object.entries(now).map(([kind, rs]) => [
                kind,
                rs.map((r, i) => r.requests - (then[kind]?.[i]?.requests ?? 0)),
              ]),
            )
          : undefined;
      resolve({ ...result, window, perReplica });
    });
  });
}

/** Runs the variants interleaved (rounds.ts). */
export const interleave = (variants: Variant<Measured>[]) => interleaveRounds(variants, ROUNDS);

/** The CPU groups of a system: each kind of our processes, its balancer, the shared servers. */
export function groupsOf(system: RunningSystem, mongo: MongoServer, redis?: RunningServer): ProcessGroups {
  const pids = (name: (typeof NODE_KINDS)[number]) => system.replicas[name].map((p) => p.child.pid);
  return {
    gateway: { pids: pids('gateway') },
    posts: { pids: pids('posts') },
    'identity, notes, files': { pids: [...pids('identity'), ...pids('notes'), ...pids('files')] },
    ...(system.balancer ? { haproxy: { pids: [system.balancer.child.pid] } } : {}),
    ...(redis?.child ? { redis: { pids: [redis.child.pid] } } : {}),
    ...(mongo.child ? { ferretdb: { pids: [mongo.child.pid] } } : {}),
    ...(mongo.postgres ? { postgres: { pids: [mongo.postgres.pid], tree: true } } : {}),
  };
}

/** What a variant's rounds come to: medians, failures, and CPU per group per request and in cores. */
export function summary(rounds: Measured[]) {
  const groups = Object.keys(rounds[0]?.window.cpuMs ?? {});
  const med = (f: (m: Measured) => number, digits = 3) => round(median(rounds.map(f)), digits);
  const coresOf = (m: Measured, g: string) => (m.window.cpuMs[g] ?? 0) / m.window.windowMs;
  const oursCores = (m: Measured) => groups.reduce((n, g) => n + coresOf(m, g), 0);
  const perReplica = rounds[0]?.perReplica
    ? Object.fromEntries(
        Object.keys(rounds[0].perReplica).map((kind) => [
          kind,
          (rounds[0]?.perReplica?.[kind] ?? []).map((_, i) =>
            rounds.reduce((n, m) => n + (m.perReplica?.[kind]?.[i] ?? 0), 0),
          ),
        ]),
      )
    : undefined;
  return {
    rps: med((m) => m.rps, 1),
    p50: med((m) => m.p50),
    p99: med((m) => m.p99),
    ...(rounds[0] && 'meanMs' in rounds[0] ? { meanMs: med((m) => (m as { meanMs?: number }).meanMs ?? 0) } : {}),
    failures: rounds.reduce((n, m) => n + m.non2xx + m.errors + m.timeouts, 0),
    requests: rounds.reduce((n, m) => n + m.requests, 0),
    rounds: rounds.map((m) => Math.round(m.rps)),
    /** CPU-ms per request served, per group (median of the rounds). */
    cpuMsPerRequest: Object.fromEntries(
      groups.map((g) => [g, med((m) => (m.window.cpuMs[g] ?? 0) / Math.max(1, m.requests))]),
    ),
    /** Cores each group kept busy over the window (median of the rounds). */
    cores: Object.fromEntries(groups.map((g) => [g, med((m) => coresOf(m, g), 2)])),
    machineBusyCores: med((m) => m.window.machineBusyCores, 2),
    /** The machine's busy cores that none of the measured processes account for: anyone else's. */
    otherCores: med((m) => Math.max(0, m.window.machineBusyCores - oursCores(m)), 2),
    perReplica,
  };
}
export type Summary = ReturnType<typeof summary>;
