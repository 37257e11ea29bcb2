/** Part 3 of the scale run, the balancer hop: the same single replicas with HAProxy in front and without. */
import { interleave, type Summary, summary, type Target } from './measured';
import type { Routes } from './routes';
import { C } from './settings';

export async function balancerHop(one: Target, direct: Target, { at, warm }: Routes, say: (s: string) => void) {
  await warm(direct, 'read', 'login');
  const hop: Record<string, Record<string, Summary>> = {};
  for (const connections of [C, 1]) {
    say(`balancer hop, ${connections} connection(s)`);
    const rounds = await interleave([
      { name: 'direct', run: () => at(direct, 'read', connections) },
      { name: 'balanced', run: () => at(one, 'read', connections) },
    ]);
    hop[connections] = { direct: summary(rounds.direct ?? []), balanced: summary(rounds.balanced ?? []) };
  }
  return hop;
}
