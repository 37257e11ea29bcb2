/**
 * Search (issue 51), `BENCH_ONLY=search npm run bench`: ours (`GET /api/posts?q=`) beside
 * PocketBase's `~` filter (an SQL LIKE '%…%' scan of title and content), on the same posts, at
 * 10,000 and then 100,000 (BENCH_SEARCH_SIZES), measured as scenario 14 measures (its
 * side-by-side rounds, 10 clients, each warmed up). Both are the systems of scenario 14: ours as
 * `npm start` runs it, PocketBase as .tools/bin/pocketbase; both get their posts written straight
 * into their databases (search/seed-direct.ts), published, by one author.
 *
 * Also: the words index's memory per 10,000 posts and each search's time without the network,
 * in this process (search/index-memory.ts), and ours' memory at idle after start (PSS of every
 * process of `npm start`).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { register } from '../pocketbase/api';
import { memoryOfTree } from '../pocketbase/process-kinds';
import type { MemoryOfSide, PocketBaseOptions, SideBySide } from '../pocketbase/report-types';
import type { Running } from '../pocketbase/running';
import { sideBySideOf } from '../pocketbase/side-by-side';
import { startOurs } from '../pocketbase/start-ours';
import { POCKETBASE_BIN, startPocketBase } from '../pocketbase/start-pocketbase';
import { SEARCHES } from '../search/corpus';
import { type IndexFigures, measureIndex } from '../search/index-memory';
import { seedOurs, seedPocketBase } from '../search/seed-direct';
import type { Author, System } from '../seed-load';
import { round } from '../stats';

export type SearchOptions = Pick<
  PocketBaseOptions,
  'dataDir' | 'dist' | 'node' | 'rounds' | 'durationS' | 'connections' | 'bcryptCost' | 'own' | 'log'
> & { sizes: number[] };

export const SEARCH_GOALS = {
  rps: 'req/s ≥ 10 × PocketBase’s `~` filter, at 10,000 posts',
  p50: 'ours p50 ≤ 5 ms at 10,000 posts',
  memory: 'idle PSS under npm start ≤ 250 MB',
} as const;

export interface SearchAtSize {
  posts: number;
  /** From the posts written to the first search answered (ours reads its listing whole then). */
  firstAnswerMs: Record<System, number>;
  searches: (SideBySide & { name: string; q: string; totals: Record<System, number> })[];
  /** Ours' memory with these posts stored and searched (every process of npm start). */
  oursMemory: MemoryOfSide;
}

export interface SearchReport {
  pocketbase: string;
  /** Ours: what the launcher says it started. */
  servers: Record<string, string>;
  connections: number;
  rounds: number;
  durationS: number;
  idleAfterStart: MemoryOfSide;
  sizes: SearchAtSize[];
  index: IndexFigures[];
  goals: typeof SEARCH_GOALS;
}

/** How long ours sits idle after start before its memory is read: what starting left behind has settled. */
const IDLE_S = 30;

function pathOf(system: System, search: (typeof SEARCHES)[number]): string {
  if (system === 'ours') return `/api/posts?q=${encodeURIComponent(search.q)}&limit=20`;
  const filter = search.words.map((w) => `(title ~ '${w}' || content ~ '${w}')`).join(' && ');
  return `/api/collections/posts/records?page=1&perPage=20&sort=-created&filter=${encodeURIComponent(filter)}`;
}

/** Past this, a system that still answers 503 or 504 to the first search after its posts were written has failed. */
const FIRST_ANSWER_MAX_MS = 600_000;

/**
 * How many posts the search matched, as the system's first page says it, and how long the first
 * answer took. The first search after a write around ours reads the listing whole (listing.ts):
 * past the gateway's timeout at 100,000 posts, while the read goes on in the posts service, so a
 * 503 or 504 is asked again until the answer comes.
 */
async function firstAnswerOf(r: Running, search: (typeof SEARCHES)[number]): Promise<{ total: number; ms: number }> {
  const started = performance.now();
  for (;;) {
    const res = await fetch(`${r.url}${pathOf(r.system, search)}`);
    if (res.ok) {
      const body = (await res.json()) as { total?: number; totalItems?: number };
      return { total: Number(r.system === 'ours' ? body.total : body.totalItems), ms: performance.now() - started };
    }
    const text = await res.text();
    if ((res.status !== 503 && res.status !== 504) || performance.now() - started > FIRST_ANSWER_MAX_MS)
      throw new Error(`${r.system}: ${res.status} ${text}`);
    await sleep(1000);
  }
}

export async function runSearch(o: SearchOptions): Promise<SearchReport> {
  const running: Running[] = [];
  o.own({ stop: () => Promise.all(running.map((r) => r.stop())) });
  o.log('bench: search, ours beside PocketBase: starting both…');
  const ours = await startOurs(join(o.dataDir, 'ours'), o.bcryptCost);
  running.push(ours);
  const pb = await startPocketBase(join(o.dataDir, 'pocketbase'), o.bcryptCost);
  running.push(pb);
  if (!ours.databaseUrl) throw new Error('ours: the launcher did not say where its database is');
  await sleep(IDLE_S * 1000);
  const idleAfterStart = memoryOfTree(ours.pid);

  const authors: Record<System, Author> = {
    ours: await register('ours', ours.url, 'search-bench@example.com'),
    pocketbase: await register('pocketbase', pb.url, 'search-bench@example.com'),
  };
  const sideBySide = sideBySideOf(o, () => running);
  const sizes: SearchAtSize[] = [];
  let seeded = 0;
  for (const size of o.sizes) {
    o.log(`bench: search, writing posts ${seeded} to ${size - 1} into both…`);
    await seedOurs(ours.databaseUrl, authors.ours.id, seeded, size - seeded);
    seedPocketBase(join(o.dataDir, 'pocketbase', 'pb_data'), authors.pocketbase.id, seeded, size - seeded);
    seeded = size;
    const searches: SearchAtSize['searches'] = [];
    let firstAnswerMs: Record<System, number> | undefined;
    for (const search of SEARCHES) {
      const first = { ours: await firstAnswerOf(ours, search), pocketbase: await firstAnswerOf(pb, search) };
      firstAnswerMs ??= { ours: round(first.ours.ms), pocketbase: round(first.pocketbase.ms) };
      const totals = { ours: first.ours.total, pocketbase: first.pocketbase.total };
      const measured = await sideBySide(`search, ${size} posts: ${search.name}`, (r) => ({
        url: `${r.url}${pathOf(r.system, search)}`,
        connections: o.connections,
      }));
      searches.push({ name: search.name, q: search.q, totals, ...measured });
    }
    sizes.push({
      posts: size,
      firstAnswerMs: firstAnswerMs as Record<System, number>,
      searches,
      oursMemory: memoryOfTree(ours.pid),
    });
  }
  for (const r of running.splice(0)) await r.stop();

  o.log('bench: search, the words index in this process…');
  const index = o.sizes.map((size) => measureIndex(size));
  return {
    // "pocketbase version v0.40.4"
    pocketbase: execFileSync(POCKETBASE_BIN, ['--version'], { encoding: 'utf8' }).trim().split(' ').pop() ?? '',
    servers: ours.servers,
    connections: o.connections,
    rounds: o.rounds,
    durationS: o.durationS,
    idleAfterStart,
    sizes,
    index,
    goals: SEARCH_GOALS,
  };
}
