/** Scenario 14's report: its rows in the main table, and a section of its own. */
import type { LoadSummary } from '../rounds';
import { round } from '../stats';
import type { CpuPerRequest, Memory, MemoryOfSide, PocketBaseReport, SideBySide } from './report-types';

const rps = (x: LoadSummary) => `${x.rps.toFixed(0)} req/s`;
const ms = (x: number) => `${round(x, 2)} ms`;
const mb = (x: Memory) => `${Math.round(x.rssMb)} / ${Math.round(x.pssMb)} MB`;

/** The rows of the report's main table. */
export function pocketbaseRows(r: PocketBaseReport): [string, string, string, string][] {
  const pair = (x: SideBySide, p = 'p50') =>
    `ours ${rps(x.ours)}, ${p} ${ms(p === 'p50' ? x.ours.p50 : x.ours.p99)}; PocketBase ${rps(x.pocketbase)}, ${p} ${ms(p === 'p50' ? x.pocketbase.p50 : x.pocketbase.p99)}`;
  const m = r.memory.afterStart;
  return [
    [
      `14 PocketBase: a post by id, ${r.posts} posts`,
      pair(r.byId),
      `${r.byId.ratio} (p50 ${r.byId.p50Ratio} ×)`,
      r.goals.byId ?? '',
    ],
    ['14 PocketBase: a create', pair(r.create), `${r.create.ratio} (p50 ${r.create.p50Ratio} ×)`, r.goals.create ?? ''],
    ...(r.publish
      ? [
          [
            `14 PocketBase: a publish, ${r.publish.inFlight} in flight`,
            `ours ${r.publish.ours.postsPerS} posts/s, p50 ${ms(r.publish.ours.p50)}; PocketBase ${r.publish.pocketbase.postsPerS} posts/s, p50 ${ms(r.publish.pocketbase.p50)}`,
            String(r.publish.ratio),
            r.goals.publish ?? '',
          ] as [string, string, string, string],
        ]
      : []),
    [
      `14 PocketBase: seeding, create + publish, ${r.seeding.inFlight} in flight`,
      `ours ${r.seeding.ours.postsPerS} posts/s; PocketBase ${r.seeding.pocketbase.postsPerS} posts/s`,
      String(r.seeding.ratio),
      '',
    ],
    [`14 PocketBase: list by tag, ${r.posts} posts`, pair(r.list), `${r.list.ratio} (p50 ${r.list.p50Ratio} ×)`, ''],
    [`14 PocketBase: login, bcrypt cost ${r.bcryptCost}`, pair(r.login), String(r.login.ratio), ''],
    [
      '14 PocketBase: memory idle after start, every process, RSS / PSS',
      `ours ${mb(m.ours)} (${m.ours.processes} processes); PocketBase ${mb(m.pocketbase)}`,
      `RSS ${m.rssRatio} ×, PSS ${m.pssRatio} ×`,
      r.goals.memory ?? '',
    ],
    [
      `14 PocketBase: list while a post is published every ${r.listWhilePublishing.everyMs / 1000} s`,
      pair(r.listWhilePublishing, 'p99'),
      `${r.listWhilePublishing.ratio} (p99 ${r.listWhilePublishing.p99Ratio} ×)`,
      r.goals.listWhilePublishing ?? '',
    ],
    [
      '14 PocketBase: start to ready, nothing changed',
      `ours ${ms(r.startToReady.ours.medianMs)}; PocketBase ${ms(r.startToReady.pocketbase.medianMs)}`,
      `${r.startToReady.ratio} ×`,
      r.goals.startToReady ?? '',
    ],
  ];
}

/** The issue's table (a row per work, ours / PocketBase), and what each side's memory is made of. */
export function pocketbaseSection(r: PocketBaseReport): string {
  const line = (x: LoadSummary, p: 'p50' | 'p99' = 'p50') => `${rps(x)}, ${p} ${ms(x[p])}`;
  const memoryParts = (m: MemoryOfSide) =>
    Object.entries(m.byName)
      .map(([name, x]) => `${name}${x.processes > 1 ? ` ×${x.processes}` : ''} ${mb(x)}`)
      .join('; ');
  const { afterStart, afterRestart } = r.memory;
  const cpuLine = (c: CpuPerRequest) =>
    `${Object.entries(c.msPerRequest)
      .map(([kind, msPer]) => `${kind} ${msPer}`)
      .join(', ')}; load generator ${c.loadGeneratorMs}; machine ${c.machineBusyCores} cores busy`;
  return [
    `## 14. Beside PocketBase (${r.pocketbase})`,
    '',
    `Ours: \`npm start\` at ${r.ours} (${Object.values(r.servers).join(', ')}). The same ${r.posts} posts (a tenth tagged "listed") and ${r.users} users on each, through their APIs; ${r.connections} clients; ${r.rounds} interleaved rounds of ${r.durationS} s; bcrypt cost ${r.bcryptCost} on both. Ratios are ours / PocketBase: of requests a second (the median of the paired rounds), and of latencies and memory.`,
    '',
    '| work | content service | PocketBase | ratio |',
    '|---|---|---|---|',
    `| one post by id, ${r.posts} posts | ${line(r.byId.ours)} | ${line(r.byId.pocketbase)} | ${r.byId.ratio} (p50 ${r.byId.p50Ratio} ×) |`,
    `| create a post | ${line(r.create.ours)} | ${line(r.create.pocketbase)} | ${r.create.ratio} (p50 ${r.create.p50Ratio} ×) |`,
    ...(r.publish
      ? [
          `| publish a draft (PocketBase: update the field), ${r.publish.inFlight} in flight, ${r.publish.count} a round | ${r.publish.ours.postsPerS} posts/s, p50 ${ms(r.publish.ours.p50)} | ${r.publish.pocketbase.postsPerS} posts/s, p50 ${ms(r.publish.pocketbase.p50)} | ${r.publish.ratio} |`,
        ]
      : []),
    `| seeding, create + publish, ${r.seeding.inFlight} in flight | ${r.seeding.ours.postsPerS} posts/s (rounds ${r.seeding.ours.rounds.join(', ')}) | ${r.seeding.pocketbase.postsPerS} posts/s (rounds ${r.seeding.pocketbase.rounds.join(', ')}) | ${r.seeding.ratio} |`,
    `| list by tag, first page, ${r.posts} posts | ${line(r.list.ours)} | ${line(r.list.pocketbase)} | ${r.list.ratio} (p50 ${r.list.p50Ratio} ×) |`,
    `| login at bcrypt cost ${r.bcryptCost} | ${r.login.ours.rps.toFixed(1)}/s | ${r.login.pocketbase.rps.toFixed(1)}/s | ${r.login.ratio} |`,
    `| memory idle after start, all processes, RSS / PSS | ${mb(afterStart.ours)} | ${mb(afterStart.pocketbase)} | ${afterStart.rssRatio} × / ${afterStart.pssRatio} × |`,
    `| the same after a restart with the posts stored | ${mb(afterRestart.ours)} | ${mb(afterRestart.pocketbase)} | ${afterRestart.rssRatio} × / ${afterRestart.pssRatio} × |`,
    `| list while a post is published every ${r.listWhilePublishing.everyMs / 1000} s, ${r.posts} posts | ${line(r.listWhilePublishing.ours, 'p99')} | ${line(r.listWhilePublishing.pocketbase, 'p99')} | ${r.listWhilePublishing.ratio} (p99 ${r.listWhilePublishing.p99Ratio} ×) |`,
    `| start to ready, nothing changed (median of ${r.startToReady.ours.restartsMs.length}) | ${ms(r.startToReady.ours.medianMs)} | ${ms(r.startToReady.pocketbase.medianMs)} | ${r.startToReady.ratio} × |`,
    '',
    ...createUnderSection(r),
    `Failures: ${[r.byId, r.create, r.list, r.login, r.listWhilePublishing].reduce((n, x) => n + x.ours.failures, 0) + r.seeding.ours.failures + (r.publish?.ours.failures ?? 0)} ours, ${[r.byId, r.create, r.list, r.login, r.listWhilePublishing].reduce((n, x) => n + x.pocketbase.failures, 0) + r.seeding.pocketbase.failures + (r.publish?.pocketbase.failures ?? 0)} PocketBase. Posts published beside the list: ${r.listWhilePublishing.published.ours} ours, ${r.listWhilePublishing.published.pocketbase} PocketBase. First start, on an empty data directory: ours ${ms(r.startToReady.ours.firstMs)}, PocketBase ${ms(r.startToReady.pocketbase.firstMs)}.`,
    '',
    `Memory idle after start, RSS / PSS: ours ${memoryParts(afterStart.ours)}. After a restart with the posts: ${memoryParts(afterRestart.ours)}; PocketBase ${mb(afterRestart.pocketbase)}.`,
    '',
    "Where the CPU went, in CPU-ms per request over the measured rounds, by kind of process (/proc: utime + stime, PostgreSQL's ended backends included), and the cores the machine kept busy; the load generator runs in a process of its own:",
    '',
    '| work | content service | PocketBase |',
    '|---|---|---|',
    ...(
      [
        ['one post by id', r.byId],
        ['create a post', r.create],
        ['list by tag', r.list],
      ] as const
    ).map(([work, x]) =>
      // Runs before the split was measured have none.
      x.cpu
        ? `| ${work} | ${cpuLine(x.cpu.ours)} | ${cpuLine(x.cpu.pocketbase)} |`
        : `| ${work} | not measured | not measured |`,
    ),
    '',
  ].join('\n');
}

/** The creates under other PostgreSQL settings: a table, when the run measured them. */
function createUnderSection(r: PocketBaseReport): string[] {
  if (!r.createUnder?.length) return [];
  const cpu = (x: SideBySide) =>
    x.cpu
      ? Object.entries(x.cpu.ours.msPerRequest)
          .map(([kind, ms]) => `${kind} ${ms}`)
          .join(', ')
      : '';
  return [
    `Creates under other PostgreSQL settings, each applied to ours alone (ALTER SYSTEM, a reload) and reset after, PocketBase measured beside each; the first row is ours as it runs (PostgreSQL's defaults: fsync on, synchronous_commit on, commit_delay 0, wal_sync_method fdatasync):`,
    '',
    '| setting | keeps every acknowledged write | ours | PocketBase | ratio | ours, CPU-ms per create |',
    '|---|---|---|---|---|---|',
    `| as we run | yes | ${rps(r.create.ours)}, p50 ${ms(r.create.ours.p50)} | ${rps(r.create.pocketbase)} | ${r.create.ratio} | ${cpu(r.create)} |`,
    ...r.createUnder.map(
      ({ setting, create }) =>
        `| ${setting.name}: ${setting.what} | ${setting.durable ? 'yes' : '**no**'} | ${rps(create.ours)}, p50 ${ms(create.ours.p50)} | ${rps(create.pocketbase)} | ${create.ratio} | ${cpu(create)} |`,
    ),
    '',
  ];
}
