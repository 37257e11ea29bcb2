/**
 * Scenario 14 (issue 36): the content service beside PocketBase, what a small team would run
 * instead of us. `BENCH_ONLY=pocketbase npm run bench`.
 *
 * Ours is the whole system as `npm start` runs it (npm, then scripts/start.sh: its setup, then the
 * launcher and everything the launcher starts), on a port and data directory of its own; its
 * memory counts every process of that tree, npm's own included, as a user's `ps` would. PocketBase is
 * .tools/bin/pocketbase (scripts/pocketbase: v0.40.4 with a `posts` collection and rules like
 * ours, bcrypt at the same cost), on a loopback port and a data directory of its own. Both are
 * seeded through their APIs with the same posts and the same number of users, and measured side
 * by side, interleaved round by round (rounds.ts), 10 clients, the load in a process of its own:
 * a post by id, a create, a publish (a draft made published: PocketBase's update of the same
 * field), seeding (create + publish, 16 in flight), the public list by tag, the login, the list
 * while a post is published every 0.5 s, the memory of every process at idle after start (RSS and
 * PSS), and the time from start to ready. On PostgreSQL, the create again under other settings of
 * its own (database-settings.ts).
 *
 * Knobs: BENCH_ROUNDS, BENCH_DURATION_S and BENCH_BCRYPT_COST (run-settings.ts), BENCH_PB_POSTS (10000),
 * BENCH_PB_STARTS (3: restarts of each, for the time to ready), BENCH_PB_PUBLISHES (500: drafts
 * published a round).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { REPO_ROOT } from '@cs/devstack';
import { applySetting, DATABASE_SETTINGS, type DatabaseSetting, resetSetting } from '../database-settings';
import type { LoadSpec } from '../load';
import { byIdPath, JSON_TYPE, listPath, PASSWORD, register } from '../pocketbase/api';
import { memoryOfTree } from '../pocketbase/process-kinds';
import type { MemoryOfSide, PocketBaseOptions, PocketBaseReport, SideBySide } from '../pocketbase/report-types';
import type { Running } from '../pocketbase/running';
import { seedFigures, seedRounds } from '../pocketbase/seeding';
import { sideBySideOf } from '../pocketbase/side-by-side';
import { startOurs } from '../pocketbase/start-ours';
import { POCKETBASE_BIN, startPocketBase } from '../pocketbase/start-pocketbase';
import { type Author, createDraft, publish, type System } from '../seed-load';
import { median, round } from '../stats';

/** Seeding's posts in flight, on each system. */
const SEED_IN_FLIGHT = 16;
/** Users on each system: seeding's authors, one per post in flight; the first also logs in and creates. */
const USERS = SEED_IN_FLIGHT;
/** The publishes of (i) in a round, on each system: drafts made before it, untimed. */
const PUBLISHES = Number(process.env.BENCH_PB_PUBLISHES ?? 500);
/** The writer beside the list of (g): one post published this often. */
const PUBLISH_EVERY_MS = 500;
/** How long both sit idle after start before their memory is read (as run.ts's idle memory). */
const IDLE_S = 3;

export async function runPocketBase(o: PocketBaseOptions): Promise<PocketBaseReport> {
  if (!existsSync(POCKETBASE_BIN))
    throw new Error(`${POCKETBASE_BIN} is missing: bash scripts/install-tools.sh pocketbase builds it`);
  // "pocketbase version v0.40.4"
  const pocketbaseVersion = execFileSync(POCKETBASE_BIN, ['--version'], { encoding: 'utf8' }).trim().split(' ').pop();
  const oursVersion = execFileSync('git', ['-C', REPO_ROOT, 'describe', '--always', '--dirty'], {
    encoding: 'utf8',
  }).trim();
  const dirs: Record<System, string> = { ours: join(o.dataDir, 'ours'), pocketbase: join(o.dataDir, 'pocketbase') };
  const running: Partial<Record<System, Running>> = {};
  const stop = async (system: System) => {
    const r = running[system];
    delete running[system];
    await r?.stop();
  };
  o.own({ stop: () => Promise.all([stop('ours'), stop('pocketbase')]) });
  const start = async (system: System) => {
    const r =
      system === 'ours'
        ? await startOurs(dirs.ours, o.bcryptCost)
        : await startPocketBase(dirs.pocketbase, o.bcryptCost);
    running[system] = r;
    return r;
  };
  const both = () => [running.ours, running.pocketbase] as Running[];

  // (f) and (h), first part: each started on an empty data directory, then both idle.
  o.log(`bench: 14 PocketBase (${pocketbaseVersion}) beside ours (${oursVersion}): starting both…`);
  const ours = await start('ours');
  const pb = await start('pocketbase');
  o.log(`bench: ours ready in ${round(ours.readyMs)} ms, PocketBase in ${round(pb.readyMs)} ms`);
  await sleep(IDLE_S * 1000);
  const afterStart = { ours: memoryOfTree(ours.pid), pocketbase: memoryOfTree(pb.pid) };

  // Users, then (c) seeding: the posts in `rounds` chunks, each system's chunk in turn.
  const authors: Record<System, Author[]> = { ours: [], pocketbase: [] };
  for (const r of both())
    for (let u = 0; u < USERS; u++)
      authors[r.system].push(await register(r.system, r.url, `pb-bench-${u}@example.com`));
  const chunk = Math.ceil(o.posts / o.rounds);
  const seededCount: Record<System, number> = { ours: 0, pocketbase: 0 };
  o.log(`bench: 14 seeding ${o.posts} posts on each, ${SEED_IN_FLIGHT} in flight…`);
  const seeded = await seedRounds(o, both(), (r) => {
    const count = Math.min(chunk, o.posts - seededCount[r.system]);
    const first = seededCount[r.system];
    seededCount[r.system] += count;
    return { authors: authors[r.system], first, count, inFlight: SEED_IN_FLIGHT };
  });
  // The first post seeding wrote on each: the one (a) reads.
  const firstId: Record<System, string> = {
    ours: seeded.ours?.find((x) => x.firstId)?.firstId ?? '',
    pocketbase: seeded.pocketbase?.find((x) => x.firstId)?.firstId ?? '',
  };
  for (const system of ['ours', 'pocketbase'] as const)
    if (!firstId[system]) throw new Error(`${system}: seeding wrote no post`);

  // The measures: each system warmed up, then both interleaved.
  const sideBySide = sideBySideOf(o, both);
  const C = o.connections;
  const [ourAuthor, pbAuthor] = [authors.ours[0] as Author, authors.pocketbase[0] as Author];
  const authorOf = (r: Running) => (r.system === 'ours' ? ourAuthor : pbAuthor);

  // (a) One published post by id, anonymous.
  const byId = await sideBySide('a post by id', (r) => ({
    url: `${r.url}${byIdPath(r.system, firstId[r.system])}`,
    connections: C,
  }));

  // (d) The public list by tag, first page.
  const list = await sideBySide('the list by tag', (r) => ({ url: `${r.url}${listPath[r.system]}`, connections: C }));

  // (g) The same list while one post is published every PUBLISH_EVERY_MS: drafts made before
  // each round, published on a fixed schedule during it.
  const published: Record<System, number> = { ours: 0, pocketbase: 0 };
  let draftNo = 1_000_000;
  const whilePublishing = await sideBySide(
    'the list while posts are published',
    (r) => ({ url: `${r.url}${listPath[r.system]}`, connections: C }),
    {
      around: async (r, measure) => {
        const author = authorOf(r);
        const drafts: string[] = [];
        for (let i = 0; i < Math.ceil((o.durationS * 1000) / PUBLISH_EVERY_MS) + 2; i++)
          drafts.push(await createDraft(r.system, r.url, author, draftNo++, 'listed'));
        let writing = true;
        const writer = (async () => {
          const t0 = Date.now();
          for (let n = 0; writing && drafts.length > 0; n++) {
            await publish(r.system, r.url, author, drafts.shift() as string);
            published[r.system] += 1;
            const wait = t0 + (n + 1) * PUBLISH_EVERY_MS - Date.now();
            if (wait > 0) await sleep(wait);
          }
        })();
        const result = await measure();
        writing = false;
        await writer;
        return result;
      },
    },
  );

  // (e) The login, at the same bcrypt cost on both: rounds twice as long, as a round ends with
  // up to 10 logins of a second or more each in flight, which it does not count.
  const login = await sideBySide(
    'the login',
    (r) =>
      r.system === 'ours'
        ? {
            url: `${r.url}/api/auth/login`,
            method: 'POST',
            headers: JSON_TYPE,
            body: JSON.stringify({ email: 'pb-bench-0@example.com', password: PASSWORD }),
            connections: C,
          }
        : {
            url: `${r.url}/api/collections/users/auth-with-password`,
            method: 'POST',
            headers: JSON_TYPE,
            body: JSON.stringify({ identity: 'pb-bench-0@example.com', password: PASSWORD }),
            connections: C,
          },
    { durationS: 2 * o.durationS },
  );

  // (b) A create, last: its drafts add to what the other measures read.
  const body = 'A post written by the benchmark, of a realistic length for a short post.';
  const createSpec = (r: Running): Omit<LoadSpec, 'durationS'> => ({
    url: r.system === 'ours' ? `${r.url}/api/posts` : `${r.url}/api/collections/posts/records`,
    method: 'POST',
    headers: { ...JSON_TYPE, authorization: `Bearer ${authorOf(r).token}` },
    body: JSON.stringify(
      r.system === 'ours'
        ? { title: 'A bench post', body, tags: ['other'] }
        : { title: 'A bench post', content: body, tags: ['other'], published: false, author: pbAuthor.id },
    ),
    connections: C,
  });
  const create = await sideBySide('a create', createSpec);

  // (j) The create again under other PostgreSQL settings, each applied to ours alone and reset
  // after; PocketBase measured beside each, as in (b).
  const createUnder: Array<{ setting: DatabaseSetting; create: SideBySide }> = [];
  if (ours.servers.mongo?.includes('PostgreSQL'))
    for (const setting of DATABASE_SETTINGS) {
      const devDataDir = join(dirs.ours, 'data');
      await applySetting(devDataDir, setting);
      try {
        createUnder.push({ setting, create: await sideBySide(`a create, ${setting.name}`, createSpec) });
      } finally {
        await resetSetting(devDataDir, setting);
      }
    }

  // (i) A publish alone: the first author's drafts, PUBLISHES a round made before it (untimed),
  // then published C at a time, as (b) creates them. PocketBase's is its update of the field.
  o.log(`bench: 14 a publish, ${PUBLISHES} drafts a round…`);
  let publishFrom = 2_000_000;
  const publishRounds = await seedRounds(o, both(), (r) => {
    const first = publishFrom;
    publishFrom += PUBLISHES;
    return { authors: [authorOf(r)], first, count: PUBLISHES, inFlight: C, publishOnly: true };
  });

  // (h) From start to ready, with the data in place and nothing changed: each stopped, then
  // started again alone, in turn. The last restart's memory at idle, with the posts stored.
  o.log(`bench: 14 start to ready, ${o.starts} restarts of each…`);
  const firstMs = { ours: ours.readyMs, pocketbase: pb.readyMs };
  const servers = ours.servers;
  await stop('ours');
  await stop('pocketbase');
  const restartsMs: Record<System, number[]> = { ours: [], pocketbase: [] };
  const afterRestart: Partial<Record<System, MemoryOfSide>> = {};
  for (let s = 0; s < o.starts; s++) {
    const order: System[] = s % 2 === 0 ? ['ours', 'pocketbase'] : ['pocketbase', 'ours'];
    for (const system of order) {
      const r = await start(system);
      restartsMs[system].push(round(r.readyMs));
      if (s === o.starts - 1) {
        await sleep(IDLE_S * 1000);
        afterRestart[system] = memoryOfTree(r.pid);
      }
      await stop(system);
    }
  }
  const startSummary = (system: System) => ({
    firstMs: round(firstMs[system]),
    restartsMs: restartsMs[system],
    medianMs: round(median(restartsMs[system])),
  });
  const memoryPair = (m: Partial<Record<System, MemoryOfSide>>) => ({
    ours: m.ours as MemoryOfSide,
    pocketbase: m.pocketbase as MemoryOfSide,
    rssRatio: round((m.ours?.rssMb ?? 0) / (m.pocketbase?.rssMb || Number.NaN), 2),
    pssRatio: round((m.ours?.pssMb ?? 0) / (m.pocketbase?.pssMb || Number.NaN), 2),
  });
  const startToReady = { ours: startSummary('ours'), pocketbase: startSummary('pocketbase') };
  const seeding = { inFlight: SEED_IN_FLIGHT, ...seedFigures(seeded) };
  const publishes = { count: PUBLISHES, inFlight: C, ...seedFigures(publishRounds) };
  return {
    pocketbase: pocketbaseVersion ?? '',
    ours: oursVersion,
    servers,
    posts: o.posts,
    users: USERS,
    bcryptCost: Number(o.bcryptCost),
    connections: C,
    rounds: o.rounds,
    durationS: o.durationS,
    byId,
    create,
    createUnder,
    publish: publishes,
    seeding,
    list: { ...list, paths: listPath },
    login,
    listWhilePublishing: { ...whilePublishing, everyMs: PUBLISH_EVERY_MS, published },
    memory: { afterStart: memoryPair(afterStart), afterRestart: memoryPair(afterRestart) },
    startToReady: {
      ...startToReady,
      ratio: round(startToReady.ours.medianMs / (startToReady.pocketbase.medianMs || Number.NaN), 2),
    },
    goals: {
      byId: 'req/s ≥ 1 × PocketBase (never below 0.5 ×); p50 ≤ 2 × PocketBase',
      create: 'req/s ≥ 0.5 × PocketBase',
      publish: 'posts/s ≥ 0.5 × PocketBase',
      listWhilePublishing: 'p99 ≤ 0.25 × PocketBase',
      memory: 'ours ≤ 250 MB PSS in all, and ≤ 10 × PocketBase',
      startToReady: 'ours ≤ 3 s when nothing changed',
    },
  };
}
