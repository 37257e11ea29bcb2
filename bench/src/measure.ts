/**
 * How the whole run measures (rounds.ts, with its settings): a load or another measuring script in
 * a process of its own, and variants interleaved round by round.
 */
import type { LoadResult, LoadSpec } from './load';
import { interleave as interleaveRounds, type LoadSummary, runScript, summarize, type Variant } from './rounds';
import { DIST, DURATION_S, NODE, ROUNDS } from './run-settings';

export const runChild = (script: string, args: string[]) => runScript(NODE, DIST, script, args);

export const load = (spec: Omit<LoadSpec, 'durationS'>, durationS = DURATION_S) =>
  runChild('load.js', [JSON.stringify({ ...spec, durationS })]);

/** Runs the variants interleaved (rounds.ts): the medians of each one's rounds. */
export async function interleave(
  variants: Variant<LoadResult>[],
  roundCount = ROUNDS,
): Promise<Record<string, LoadSummary>> {
  const rounds = await interleaveRounds(variants, roundCount);
  return Object.fromEntries(Object.entries(rounds).map(([name, rs]) => [name, summarize(rs)]));
}
