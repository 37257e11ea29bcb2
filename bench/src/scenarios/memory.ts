/**
 * Scenario 6, memory: a warm-up, then a mixed soak; RSS of every process before and after. And the
 * report's memory section: per scenario, the soak, and every process idle after start and after
 * the whole run.
 */
import type { BenchSystem } from '../bench-system';
import { load } from '../measure';
import type { MemoryWatch } from '../memory-watch';
import type { Report, Row } from '../report-json';
import { rssMb } from '../rss';
import { CONNECTIONS as C, SOAK_S } from '../run-settings';
import { round } from '../stats';

export async function memorySoak({ gw, postPath, auth }: BenchSystem, { processes }: MemoryWatch) {
  const uploadBody = JSON.stringify({ contentType: 'text/plain', filename: 'bench.txt', size: 1024 });
  await load({ url: `${gw}${postPath}`, connections: C }, Math.min(5, SOAK_S));
  const warm = Object.fromEntries(Object.entries(processes).map(([n, c]) => [n, rssMb(c.pid)]));
  const each = Math.max(1, SOAK_S / 3);
  await Promise.all([
    load({ url: `${gw}/api/posts?tag=listed&limit=20`, connections: 4 }, SOAK_S),
    load({ url: `${gw}/api/posts/my-posts`, headers: auth, connections: 2 }, SOAK_S),
    (async () => {
      for (let i = 0; i < 3; i++)
        await load({ url: `${gw}/upload-url`, method: 'POST', headers: auth, body: uploadBody, connections: 2 }, each);
    })(),
  ]);
  const after = Object.fromEntries(Object.entries(processes).map(([n, c]) => [n, rssMb(c.pid)]));
  return Object.fromEntries(
    Object.keys(warm).map((n) => [
      n,
      {
        warmMb: warm[n],
        afterMb: after[n],
        growthPct: round((((after[n] ?? 0) - (warm[n] ?? 1)) / (warm[n] ?? 1)) * 100),
      },
    ]),
  );
}

type Snapshot = ReturnType<MemoryWatch['memorySnapshot']>;

export const memoryFigures = (
  perScenario: MemoryWatch['memory'],
  soak: Awaited<ReturnType<typeof memorySoak>>,
  idle: Snapshot,
  afterLoad: Snapshot,
) => ({
  perScenario,
  soak,
  goal: 'no process grows more than 20% across the soak once warm',
  idle,
  afterLoad,
  idleGoal: 'our six processes (the gateway and five services) together ≤ 300 MB',
});

/** The soak's rows, a process each, then every process's memory idle and after the whole run. */
export function memoryRows(memory: Report): Row[] {
  return [
    ...Object.entries(memory.soak as Report).map(
      ([name, m]: [string, Report]) =>
        [`6 memory, ${name}`, `${m.warmMb} → ${m.afterMb} MB`, `${m.growthPct}%`, '≤ 20%'] as Row,
    ),
    ...(['idle', 'afterLoad'] as const).map(
      (when) =>
        [
          `memory, ${when === 'idle' ? 'idle after start' : 'after the whole run'}`,
          Object.entries(memory[when] as Report)
            .map(([name, x]: [string, Report]) => `${name} ${x.rssMb} MB RSS / ${x.pssMb} MB PSS`)
            .join('; '),
          `ours: ${memory[when]['ours together'].rssMb} MB RSS, ${memory[when]['ours together'].pssMb} MB PSS`,
          memory.idleGoal,
        ] as Row,
    ),
  ];
}
