/** Part 1 of the scale run: one replica of each process against two, each behind the balancer. */
import { pairedRatio } from '../stats';
import { interleave, type Summary, summary, type Target } from './measured';
import type { Routes } from './routes';
import { REPLICAS } from './settings';

export async function replicasScale(one: Target, two: Target, { at, warm }: Routes, say: (s: string) => void) {
  say('warming up');
  await warm(one, 'read', 'write');
  await warm(two, 'read', 'write');
  const scale: Record<string, Record<string, Summary>> = {};
  const scaleRatios: Record<string, number> = {};
  for (const route of ['read', 'write'] as const) {
    say(`1 and ${REPLICAS} replicas, ${route}`);
    const rounds = await interleave([
      { name: '1', run: () => at(one, route) },
      { name: String(REPLICAS), run: () => at(two, route) },
    ]);
    scale[route] = { '1': summary(rounds['1'] ?? []), [REPLICAS]: summary(rounds[String(REPLICAS)] ?? []) };
    scaleRatios[route] = pairedRatio(
      (rounds[String(REPLICAS)] ?? []).map((m) => m.rps),
      (rounds['1'] ?? []).map((m) => m.rps),
    );
  }
  return { scale, scaleRatios };
}
