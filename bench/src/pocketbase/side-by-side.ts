/**
 * Scenario 14's measure: one request on both systems, each warmed up, then both interleaved round
 * by round (rounds.ts), with where each side's CPU went over its rounds.
 */

import { cpuBetween, cpuSnapshot } from '../cpu';
import type { LoadResult, LoadSpec } from '../load';
import { interleave, runScript, summarize } from '../rounds';
import type { System } from '../seed-load';
import { pairedRatio, round } from '../stats';
import { processGroups } from './process-kinds';
import type { CpuPerRequest, PocketBaseOptions, SideBySide } from './report-types';
import type { Running } from './running';

/** Each measure's warm-up per system, not counted. */
const WARMUP_S = 2;

/** How a request is measured on one side; `around` runs beside the measure (a writer, say). */
export interface SideBySideSpec {
  around?: (r: Running, measure: () => Promise<LoadResult>) => Promise<LoadResult>;
  durationS?: number;
}

/** The measure for the systems `both()` returns, with the scenario's settings. */
export function sideBySideOf(
  o: Pick<PocketBaseOptions, 'node' | 'dist' | 'rounds' | 'durationS' | 'log'>,
  both: () => Running[],
) {
  const load = (spec: Omit<LoadSpec, 'durationS'>, durationS = o.durationS) =>
    runScript<LoadResult>(o.node, o.dist, 'load.js', [JSON.stringify({ ...spec, durationS })]);
  return async (
    what: string,
    spec: (r: Running) => Omit<LoadSpec, 'durationS'>,
    { around, durationS = o.durationS }: SideBySideSpec = {},
  ): Promise<SideBySide> => {
    o.log(`bench: 14 ${what}…`);
    const exact = (r: Running) => ({ ...spec(r), exactLatency: true });
    for (const r of both()) await load(exact(r), Math.min(WARMUP_S, durationS));
    const spent: Record<
      System,
      { cpuMs: Record<string, number>; busyMs: number; windowMs: number; requests: number; loadMs: number }
    > = {
      ours: { cpuMs: {}, busyMs: 0, windowMs: 0, requests: 0, loadMs: 0 },
      pocketbase: { cpuMs: {}, busyMs: 0, windowMs: 0, requests: 0, loadMs: 0 },
    };
    const rounds = await interleave(
      both().map((r) => ({
        name: r.system,
        run: async () => {
          const before = cpuSnapshot(processGroups(r.pid));
          const result = await (around ? around(r, () => load(exact(r), durationS)) : load(exact(r), durationS));
          const window = cpuBetween(before, cpuSnapshot(processGroups(r.pid)));
          const side = spent[r.system];
          for (const [kind, ms] of Object.entries(window.cpuMs)) side.cpuMs[kind] = (side.cpuMs[kind] ?? 0) + ms;
          side.busyMs += window.machineBusyCores * window.windowMs;
          side.windowMs += window.windowMs;
          side.requests += result.requests;
          side.loadMs += result.cpuMs ?? 0;
          return result;
        },
      })),
      o.rounds,
    );
    const s = { ours: summarize(rounds.ours ?? []), pocketbase: summarize(rounds.pocketbase ?? []) };
    const perRequest = (side: (typeof spent)[System]): CpuPerRequest => {
      const per = (ms: number) => round(ms / Math.max(side.requests, 1), 3);
      return {
        msPerRequest: Object.fromEntries(
          Object.entries(side.cpuMs)
            .filter(([, ms]) => ms > 0)
            .sort(([, a], [, b]) => b - a)
            .map(([kind, ms]) => [kind, per(ms)]),
        ),
        loadGeneratorMs: per(side.loadMs),
        machineBusyCores: round(side.busyMs / Math.max(side.windowMs, 1), 2),
      };
    };
    return {
      ...s,
      cpu: { ours: perRequest(spent.ours), pocketbase: perRequest(spent.pocketbase) },
      ratio: pairedRatio(s.ours.rounds, s.pocketbase.rounds),
      p50Ratio: round(s.ours.p50 / (s.pocketbase.p50 || Number.NaN), 2),
      p99Ratio: round(s.ours.p99 / (s.pocketbase.p99 || Number.NaN), 2),
    };
  };
}
