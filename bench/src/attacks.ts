/**
 * Scenario 11 (issue 37, part 1): no client, within our limits, slows everyone else. With
 * ATTACK_POSTS published posts stored, each attack runs beside a bystander, and the bystander's
 * figures are compared with its own, measured first without any attack.
 *
 * The system is one of its own (the embedded default, as `npm start` runs it), with the gateway's
 * default rate limits on (the rest of the bench turns them off): every attack stays within them,
 * and `withinLimits` refuses to run one that would not. Each client is a loopback source address
 * of its own (127.0.0.x), which is what the gateway counts per and the services take turns by.
 * Every rate and concurrency is a constant here, and the pages and e-mails the attackers pick come
 * from a seeded generator (paced-load.ts), so a run can be repeated.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { type RunningSystem, type SystemOptions, startSystem, withDatabase } from '@cs/devstack';
import { markListingChanged } from '@cs/posts/operations';
import mongoose, { Types } from 'mongoose';
import type { PacedRequest, PacedResult, PacedSpec, PacedStream } from './paced-load';
import { runScript } from './rounds';
import { round } from './stats';

/** Published posts stored before any attack. */
export const ATTACK_POSTS = Number(process.env.BENCH_ATTACK_POSTS ?? 10_000);
/** How long the bystander measures, alone and beside each attack. */
const MEASURE_S = Number(process.env.BENCH_ATTACK_S ?? 25);
/** Each attack runs this long before the bystander starts measuring, and 1 s after it stops. */
const RAMP_S = Math.min(3, MEASURE_S);
/** A pause after each attack, for the work it queued to drain before the next one. */
const SETTLE_S = Math.min(5, MEASURE_S);
/** The bystander's own warm-up, before its figures without attack (not reported). */
const WARMUP_S = Math.min(5, MEASURE_S);

/** The gateway's defaults (gateway/src/config.ts), set explicitly: what the attacks stay within. */
const RATE_LIMIT = 600;
const AUTH_RATE_LIMIT = 10;
const RATE_WINDOW_S = 60;

/** The tags the seeded posts carry, one each in turn; the list attackers pick among them. */
const TAGS = ['news', 'travel', 'food', 'tech'];

/**
 * The bystander, at a modest fixed pace: its reads and note creates from one address (8 a second
 * there, 480 a minute, under RATE_LIMIT); its logins in turn from 8 addresses of its own, each
 * 5 a minute under AUTH_RATE_LIMIT (one address would allow it 10 logins a minute, too few to time).
 */
const BYSTANDER = {
  address: '127.0.0.2',
  loginAddresses: addresses(3, 8),
  byIdPerS: 3,
  notePerS: 2,
  listPerS: 3,
  loginPerS: 2 / 3,
  concurrency: 8,
};

/** 1 and 2: list pages that are not kept, at this pace from each attacking address. */
const LIST_ATTACK = { ratePerS: 6, concurrency: 8, maxLimit: 50 };
const LIST_ATTACK_ADDRESSES = 16;
/** 3: one account flips its own post between draft and published (1,300 in 15 s). */
const FLIP_ATTACK = { ratePerS: 87, concurrency: 8, addresses: 16 };
/** 4: wrong logins for accounts that do not exist, one at a time from each of 48 addresses. */
const LOGIN_ATTACK = { ratePerS: 0.3, concurrency: 1, addresses: 48 };

/** `n` loopback addresses from 127.0.0.`first`. */
function addresses(first: number, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `127.0.0.${first + i}`);
}

const BYSTANDER_REQUESTS = ['read by id', 'note create', 'public list, page 1', 'login'] as const;
type BystanderRequest = (typeof BYSTANDER_REQUESTS)[number];
/** The goal's bound on each bystander request's p50, as a multiple of its p50 without attack. */
const BOUND: Record<BystanderRequest, number> = {
  'read by id': 2,
  'note create': 2,
  'public list, page 1': 2,
  login: 3,
};
const SUCCESS_GOAL_PCT = 99;
export const ATTACKS_GOAL =
  'beside each attack, the bystander p50 of a read by id, a note create and the public list within 2× of its p50 without attack, a login within 3×; ≥ 99% of its requests succeed';

interface Attack {
  name: string;
  /** What it does, in the report. */
  what: string;
  streams: PacedStream[];
}

function attacks(ctx: { flipPath: string; flipHeaders: Record<string, string>; tagTotals: number[] }): Attack[] {
  const listPages: PacedRequest = {
    kind: 'list pages',
    tags: TAGS.map((tag, i) => ({ tag, total: ctx.tagTotals[i] ?? 0 })),
    maxLimit: LIST_ATTACK.maxLimit,
  };
  const lister = (address: string): PacedStream => ({
    name: 'attacker',
    request: listPages,
    ratePerS: LIST_ATTACK.ratePerS,
    concurrency: LIST_ATTACK.concurrency,
    addresses: [address],
  });
  return [
    {
      name: 'one address',
      what: `list pages not kept (page up to the last, limit 1..${LIST_ATTACK.maxLimit}, ${TAGS.length} tags), ${LIST_ATTACK.concurrency} at a time, ${LIST_ATTACK.ratePerS}/s, from 1 address`,
      streams: addresses(20, 1).map(lister),
    },
    {
      name: `${LIST_ATTACK_ADDRESSES} addresses`,
      what: `the same from each of ${LIST_ATTACK_ADDRESSES} addresses (${LIST_ATTACK.ratePerS * LIST_ATTACK_ADDRESSES}/s in all)`,
      streams: addresses(32, LIST_ATTACK_ADDRESSES).map(lister),
    },
    {
      name: 'flipping account',
      what: `one account puts its own post to draft and back to published, ${FLIP_ATTACK.ratePerS}/s (${FLIP_ATTACK.ratePerS * 15} in 15 s), ${FLIP_ATTACK.concurrency} at a time, from ${FLIP_ATTACK.addresses} addresses in turn`,
      streams: [
        {
          name: 'attacker',
          request: { kind: 'flip', path: ctx.flipPath, headers: ctx.flipHeaders },
          ratePerS: FLIP_ATTACK.ratePerS,
          concurrency: FLIP_ATTACK.concurrency,
          addresses: addresses(64, FLIP_ATTACK.addresses),
        },
      ],
    },
    {
      name: 'distributed logins',
      what: `wrong logins for unknown accounts from ${LOGIN_ATTACK.addresses} addresses, each ${LOGIN_ATTACK.concurrency} at a time and ${LOGIN_ATTACK.ratePerS}/s`,
      streams: addresses(100, LOGIN_ATTACK.addresses).map((address) => ({
        name: 'attacker',
        request: { kind: 'unknown login' },
        ratePerS: LOGIN_ATTACK.ratePerS,
        concurrency: LOGIN_ATTACK.concurrency,
        addresses: [address],
      })),
    },
  ];
}

const isAuth = (request: PacedRequest) =>
  request.kind === 'unknown login' || ('path' in request && request.path.startsWith('/api/auth'));

/**
 * Throws unless every address stays within the gateway's limits: at most this many requests in
 * any window of RATE_WINDOW_S. `spanS`: how long the streams' addresses are used in all (an
 * attack's are used in its phase only; the bystander's in every phase, so over any window).
 */
function withinLimits(streams: PacedStream[], spanS: number): void {
  const perAddress = new Map<string, number>();
  for (const s of streams) {
    const auth = isAuth(s.request);
    for (const address of s.addresses) {
      const key = `${auth ? 'auth' : 'default'} ${address}`;
      perAddress.set(key, (perAddress.get(key) ?? 0) + s.ratePerS / s.addresses.length);
    }
  }
  for (const [key, perS] of perAddress) {
    const most = Math.floor(perS * Math.min(spanS, RATE_WINDOW_S)) + 1;
    const limit = key.startsWith('auth') ? AUTH_RATE_LIMIT : RATE_LIMIT;
    if (most >= limit) throw new Error(`${key}: up to ${most} requests a window, against a limit of ${limit}`);
  }
}

export interface BystanderFigures {
  p50Without: number;
  p50With: number;
  ratio: number;
  p99Without: number;
  p99With: number;
  sent: number;
  succeededPct: number;
}

export interface AttackFigures {
  name: string;
  what: string;
  attacker: { rps: number; sent: number; p50: number; statuses: Record<string, number> };
  bystander: Record<BystanderRequest, BystanderFigures>;
  bystanderSucceededPct: number;
  goalMet: boolean;
}

export interface AttacksReport {
  posts: number;
  measureS: number;
  limits: { rateLimit: number; authRateLimit: number; windowS: number };
  bystanderRates: Record<BystanderRequest, number>;
  without: Record<string, PacedResult>;
  attacks: AttackFigures[];
  goal: string;
}

export interface AttackOptions {
  dataDir: string;
  mongoUrl: string;
  storage: SystemOptions['storage'];
  jwtSecret: string;
  dbPrefix: string;
  bcryptCost: string;
  /** The bench's built files (paced-load.js), and the node to run them with. */
  dist: string;
  node: string;
  /** Called with the system once started, for the bench to stop it on Ctrl-C. */
  own(stoppable: { stop(): Promise<unknown> }): void;
  log(line: string): void;
}

function runPaced(o: AttackOptions, spec: PacedSpec): Promise<Record<string, PacedResult>> {
  return runScript(o.node, o.dist, 'paced-load.js', [JSON.stringify(spec)]);
}

async function postJson(url: string, body: unknown, headers: Record<string, string> = {}, method = 'POST') {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** ATTACK_POSTS published posts, written straight to the database, and the listing told. */
async function seedPosts(mongoUrl: string): Promise<{ readId: string; tagTotals: number[] }> {
  const db = await mongoose.createConnection(mongoUrl).asPromise();
  try {
    const author = new Types.ObjectId();
    const now = Date.now();
    const tagTotals = TAGS.map(() => 0);
    let readId = '';
    for (let first = 0; first < ATTACK_POSTS; first += 1000) {
      const batch = Array.from({ length: Math.min(1000, ATTACK_POSTS - first) }, (_, j) => {
        const i = first + j;
        const at = new Date(now - (i + 1) * 1000);
        const t = i % TAGS.length;
        tagTotals[t] = (tagTotals[t] ?? 0) + 1;
        return {
          _id: new Types.ObjectId(),
          title: `Seeded post ${i}`,
          body: 'A body of a realistic length for a short post in the list. '.repeat(3),
          authorId: author,
          status: 'published',
          tags: [TAGS[t]],
          publishedAt: at,
          createdAt: at,
          updatedAt: at,
          version: 0,
        };
      });
      if (!readId) readId = batch[Math.floor(batch.length / 2)]?._id.toHexString() ?? '';
      await db.collection('posts').insertMany(batch);
    }
    await markListingChanged(db);
    return { readId, tagTotals };
  } finally {
    await db.close();
  }
}

const percentOf = (ok: number, all: number) => (all ? round((ok / all) * 100, 2) : 0);
const okCount = (r: PacedResult | undefined) =>
  Object.entries(r?.statuses ?? {}).reduce((n, [status, c]) => n + (/^2/.test(status) ? c : 0), 0);

export async function runAttacks(o: AttackOptions): Promise<AttacksReport> {
  const system: RunningSystem = await startSystem({
    dataDir: o.dataDir,
    mongoUrl: o.mongoUrl,
    storage: o.storage,
    jwtSecret: o.jwtSecret,
    dbPrefix: o.dbPrefix,
    env: {
      LOG_LEVEL: 'warn',
      BCRYPT_COST: o.bcryptCost,
      RATE_LIMIT: String(RATE_LIMIT),
      AUTH_RATE_LIMIT: String(AUTH_RATE_LIMIT),
      RATE_WINDOW: `${RATE_WINDOW_S}s`,
    },
  });
  o.own(system);
  try {
    const gw = system.gatewayUrl;
    const { readId, tagTotals } = await seedPosts(withDatabase(o.mongoUrl, `${o.dbPrefix}posts`));
    o.log(`bench: 11 attacks: ${ATTACK_POSTS} posts stored`);

    // Two accounts, registered from 127.0.0.1, which no stream uses: the bystander, and the
    // account that flips its own post (published once before the attack, and newest of all).
    const password = 'bench-password';
    const register = async (who: string) =>
      String(
        (await postJson(`${gw}/api/auth/register`, { email: `${who}-${process.pid}@example.com`, password })).token,
      );
    const bystanderEmail = `bystander-${process.pid}@example.com`;
    const bystanderAuth = { authorization: `Bearer ${await register('bystander')}` };
    const flipHeaders = { authorization: `Bearer ${await register('flipper')}` };
    const flipPost = await postJson(
      `${gw}/api/posts`,
      { title: 'Flipped', body: 'A post its author keeps flipping.', tags: [TAGS[0]] },
      flipHeaders,
    );
    const flipPath = `/api/posts/${String(flipPost._id)}`;
    await postJson(`${gw}${flipPath}`, { status: 'published' }, flipHeaders, 'PUT');

    const bystander: PacedStream[] = [
      {
        name: 'read by id',
        request: { kind: 'get', path: `/api/posts/${readId}` },
        ratePerS: BYSTANDER.byIdPerS,
        concurrency: BYSTANDER.concurrency,
        addresses: [BYSTANDER.address],
      },
      {
        name: 'note create',
        request: {
          kind: 'json',
          method: 'POST',
          path: '/api/notes',
          headers: bystanderAuth,
          body: { title: 'A bystander note', body: 'Written while someone else attacks.' },
        },
        ratePerS: BYSTANDER.notePerS,
        concurrency: BYSTANDER.concurrency,
        addresses: [BYSTANDER.address],
      },
      {
        name: 'public list, page 1',
        request: { kind: 'get', path: '/api/posts?page=1&limit=20' },
        ratePerS: BYSTANDER.listPerS,
        concurrency: BYSTANDER.concurrency,
        addresses: [BYSTANDER.address],
      },
      {
        name: 'login',
        request: { kind: 'json', method: 'POST', path: '/api/auth/login', body: { email: bystanderEmail, password } },
        ratePerS: BYSTANDER.loginPerS,
        concurrency: BYSTANDER.concurrency,
        addresses: BYSTANDER.loginAddresses,
      },
    ];
    const planned = attacks({ flipPath, flipHeaders, tagTotals });
    const attackS = RAMP_S + MEASURE_S + 1;
    withinLimits(bystander, RATE_WINDOW_S);
    const used = new Set([...bystander.flatMap((s) => s.addresses), '127.0.0.1']);
    for (const attack of planned) {
      withinLimits(attack.streams, attackS);
      for (const address of new Set(attack.streams.flatMap((s) => s.addresses))) {
        if (used.has(address)) throw new Error(`${attack.name}: ${address} is used elsewhere`);
        used.add(address);
      }
    }

    const measureBystander = (durationS = MEASURE_S) =>
      runPaced(o, { gateway: gw, durationS, seed: 1, streams: bystander });
    await measureBystander(WARMUP_S);
    o.log('bench: 11 attacks: the bystander alone');
    const without = await measureBystander();
    await sleep(SETTLE_S * 1000);

    const figures: AttackFigures[] = [];
    for (const [n, attack] of planned.entries()) {
      o.log(`bench: 11 attacks: ${attack.name}`);
      const attacker = runPaced(o, { gateway: gw, durationS: attackS, seed: 100 * (n + 1), streams: attack.streams });
      await sleep(RAMP_S * 1000);
      const during = await measureBystander();
      const attackerResult = (await attacker).attacker;
      await sleep(SETTLE_S * 1000);

      const each = Object.fromEntries(
        BYSTANDER_REQUESTS.map((name) => {
          const before = without[name];
          const now = during[name];
          const p50Without = before?.p50 ?? 0;
          const p50With = now?.p50 ?? 0;
          return [
            name,
            {
              p50Without,
              p50With,
              ratio: round(p50With / (p50Without || Number.NaN), 2),
              p99Without: before?.p99 ?? 0,
              p99With: now?.p99 ?? 0,
              sent: now?.sent ?? 0,
              succeededPct: now?.succeeded ?? 0,
            },
          ];
        }),
      ) as Record<BystanderRequest, BystanderFigures>;
      const sent = BYSTANDER_REQUESTS.reduce((sum, name) => sum + (during[name]?.sent ?? 0), 0);
      const ok = BYSTANDER_REQUESTS.reduce((sum, name) => sum + okCount(during[name]), 0);
      const bystanderSucceededPct = percentOf(ok, sent);
      figures.push({
        name: attack.name,
        what: attack.what,
        attacker: {
          rps: attackerResult?.rps ?? 0,
          sent: attackerResult?.sent ?? 0,
          p50: attackerResult?.p50 ?? 0,
          statuses: attackerResult?.statuses ?? {},
        },
        bystander: each,
        bystanderSucceededPct,
        goalMet:
          bystanderSucceededPct >= SUCCESS_GOAL_PCT &&
          BYSTANDER_REQUESTS.every((name) => each[name].ratio <= BOUND[name]),
      });
    }
    return {
      posts: ATTACK_POSTS,
      measureS: MEASURE_S,
      limits: { rateLimit: RATE_LIMIT, authRateLimit: AUTH_RATE_LIMIT, windowS: RATE_WINDOW_S },
      bystanderRates: {
        'read by id': BYSTANDER.byIdPerS,
        'note create': BYSTANDER.notePerS,
        'public list, page 1': BYSTANDER.listPerS,
        login: round(BYSTANDER.loginPerS, 2),
      },
      without,
      attacks: figures,
      goal: ATTACKS_GOAL,
    };
  } finally {
    await system.stop();
  }
}

// ---------- the report ----------

const statusList = (statuses: Record<string, number>) =>
  [
    '200',
    '429',
    '503',
    ...Object.keys(statuses)
      .filter((s) => !['200', '429', '503'].includes(s))
      .sort(),
  ]
    .map((s) => `${s}: ${statuses[s] ?? 0}`)
    .join(', ');

/** One row per attack for the bench's table: scenario, measured, ratio, goal. */
export function attackRows(a: AttacksReport): [string, string, string, string][] {
  const rows: [string, string, string, string][] = [
    [
      `11 attacks, the bystander alone (${a.posts} posts)`,
      BYSTANDER_REQUESTS.map(
        (name) =>
          `${name} p50 ${a.without[name]?.p50} ms (p99 ${a.without[name]?.p99}), ${a.without[name]?.succeeded}% ok`,
      ).join('; '),
      '(baseline)',
      'the figures without attack',
    ],
  ];
  for (const x of a.attacks) {
    const worst = (names: BystanderRequest[]) => Math.max(...names.map((n) => x.bystander[n].ratio));
    rows.push([
      `11 attack: ${x.name}`,
      `bystander p50 without → with: ${BYSTANDER_REQUESTS.map(
        (name) =>
          `${name} ${x.bystander[name].p50Without} → ${x.bystander[name].p50With} ms (${x.bystander[name].ratio}×)`,
      ).join(
        '; ',
      )}; ${x.bystanderSucceededPct}% of its requests succeeded. Attacker: ${x.attacker.rps} rps, ${statusList(x.attacker.statuses)}`,
      `reads worst ${worst(['read by id', 'note create', 'public list, page 1'])}×, login ${x.bystander.login.ratio}×, ${x.bystanderSucceededPct}% ok: goal ${x.goalMet ? 'met' : 'not met'}`,
      'reads ≤ 2×, login ≤ 3×, ≥ 99% ok',
    ]);
  }
  return rows;
}

/** The whole of scenario 11, a table per attack. */
export function attackSection(a: AttacksReport): string {
  const lines = [
    '## 11 Attacks beside a bystander',
    '',
    `${a.posts} published posts; the gateway's limits on (${a.limits.rateLimit} requests and ${a.limits.authRateLimit} on /api/auth a ${a.limits.windowS} s window per address), every attacker within them. The bystander sends ${BYSTANDER_REQUESTS.map((n) => `${n} ${a.bystanderRates[n]}/s`).join(', ')}, and is measured for ${a.measureS} s alone, then beside each attack. Goal: ${a.goal}.`,
    '',
  ];
  for (const x of a.attacks) {
    lines.push(
      `### ${x.name}: goal ${x.goalMet ? 'met' : 'not met'}`,
      '',
      `${x.what}. Attacker: ${x.attacker.sent} sent, ${x.attacker.rps} answered a second, p50 ${x.attacker.p50} ms; ${statusList(x.attacker.statuses)}.`,
      '',
      '| bystander request | p50 without | p50 with | ratio | bound | p99 without | p99 with | succeeded |',
      '|---|---|---|---|---|---|---|---|',
      ...BYSTANDER_REQUESTS.map((name) => {
        const b = x.bystander[name];
        return `| ${name} | ${b.p50Without} ms | ${b.p50With} ms | ${b.ratio}× | ≤ ${BOUND[name]}× | ${b.p99Without} ms | ${b.p99With} ms | ${b.succeededPct}% of ${b.sent} |`;
      }),
      '',
      `All the bystander's requests: ${x.bystanderSucceededPct}% succeeded (goal ≥ ${SUCCESS_GOAL_PCT}%).`,
      '',
    );
  }
  return lines.join('\n');
}
