/**
 * Scenario 14's writes in bulk, through seed-load.js in a process of its own: seeding (create +
 * publish) and publishes alone, both systems interleaved round by round (rounds.ts).
 */
import { interleave, runScript } from '../rounds';
import type { Author, SeedResult, System } from '../seed-load';
import { median, pairedRatio, round } from '../stats';
import type { PocketBaseOptions } from './report-types';
import type { Running } from './running';

type Settings = Pick<PocketBaseOptions, 'node' | 'dist' | 'rounds'>;

/** What seed-load.js is told, apart from the system it writes to. */
interface SeedSpec {
  authors: Author[];
  first: number;
  count: number;
  inFlight: number;
  publishOnly?: boolean;
}

/** Each system's rounds of seed-load.js, `spec(r)` saying what a round of `r` writes. */
export function seedRounds(
  o: Settings,
  both: Running[],
  spec: (r: Running) => SeedSpec,
): Promise<Partial<Record<System, SeedResult[]>>> {
  return interleave<SeedResult>(
    both.map((r) => ({
      name: r.system,
      run: () =>
        runScript<SeedResult>(o.node, o.dist, 'seed-load.js', [
          JSON.stringify({ system: r.system, url: r.url, ...spec(r) }),
        ]),
    })),
    o.rounds,
  );
}

const seedSummary = (rs: SeedResult[]) => ({
  postsPerS: round(median(rs.map((x) => x.postsPerS))),
  p50: round(median(rs.map((x) => x.p50))),
  rounds: rs.map((x) => Math.round(x.postsPerS)),
  failures: rs.reduce((n, x) => n + x.failures, 0),
});

/** Both sides' posts a second, p50 and failures, and ours over PocketBase (median of the paired rounds). */
export function seedFigures(rounds: Partial<Record<System, SeedResult[]>>) {
  return {
    ours: seedSummary(rounds.ours ?? []),
    pocketbase: seedSummary(rounds.pocketbase ?? []),
    ratio: pairedRatio(
      (rounds.ours ?? []).map((x) => x.postsPerS),
      (rounds.pocketbase ?? []).map((x) => x.postsPerS),
    ),
  };
}
