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
 *
 * Issue 46 added the attacks that found its faults, 5 to 10: a botnet of wrong logins (a fresh
 * address every 9 requests, 127.1.y.z), one account's unread streams with big updates
 * (unread-streams.ts), a resume flood over a seeded bus, a logout flood of one token, and a bulk
 * publisher. For each, the one process's resident memory is watched (peak-memory.ts), and whether
 * it is still there after.
 */

import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type RunningSystem, type SystemOptions, startSystem, withDatabase } from '@cs/devstack';
import { markListingChanged } from '@cs/posts/operations';
import mongoose, { Types } from 'mongoose';
import { LIMITS_OFF } from './limits-off';
import type { PacedRequest, PacedResult, PacedSpec, PacedStream } from './paced-load';
import { watchPeakMemory } from './peak-memory';
import { runScript } from './rounds';
import { processName } from './rss';
import { round } from './stats';
import type { UnreadStreamsResult, UnreadStreamsSpec } from './unread-streams';

/** Published posts stored before any attack. */
export const ATTACK_POSTS = Number(process.env.BENCH_ATTACK_POSTS ?? 10_000);
/** Only the attacks named here (separated by semicolons, as names have commas; all by default), for a run of one or two. */
const ONLY_ATTACKS = process.env.BENCH_ATTACKS?.split(';').map((name) => name.trim());
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
/**
 * 5: a botnet of wrong logins for accounts that do not exist: 48 at a time, as fast as they are
 * answered, each address (127.1.y.z, never one used before) sending 9 and then giving way to the
 * next, within AUTH_RATE_LIMIT: no limit per address can stop it.
 */
const BOTNET = { concurrency: 48, perAddress: 9, block: 1, ratePerS: 2000 };
/**
 * 6: one account's notes streams, never read, 200 from each of 23 addresses (4,600 tried: the
 * attack that took the process down), and as many anonymous posts streams from the same
 * addresses; then 20 updates of one of the account's notes with a body of 98 kB.
 */
const UNREAD = {
  addresses: addresses(160, 23),
  perAddress: Number(process.env.BENCH_ATTACK_UNREAD_PER_ADDRESS ?? 200),
  updateAddress: '127.0.0.183',
  updates: 20,
  bodyBytes: 98_000,
};
/** 7: anonymous posts streams that resume from the bus's start (`Last-Event-ID: 0-0`), each read 1 s then closed. */
const RESUME = { ratePerS: 2, concurrency: 8, readMs: 1000, addresses: addresses(190, 2) };
/** Before 7, not measured: the bus seeded with note updates of 98 kB, from 8 addresses. */
const BUS_SEED = {
  updates: Number(process.env.BENCH_ATTACK_BUS_UPDATES ?? 1000),
  bodyBytes: 98_000,
  ratePerS: 8 * 9.5,
  concurrency: 8,
  addresses: addresses(200, 8),
};
/** 8: one access token logged out over and over, 9.5/s from each of 16 addresses (logout is on the default limit). */
const LOGOUT_FLOOD = { ratePerS: 16 * 9.5, concurrency: 16, addresses: addresses(210, 16) };
/**
 * 9 and 10: one account creates and publishes BULK_POSTS distinct posts, 16 in flight as scenario
 * 14 seeds, each address at 9.9 requests a second (a create and a publish: 4.95 posts), just under
 * RATE_LIMIT: from one address for MEASURE_S, then from 16 (an import's pool of workers).
 */
export const BULK_POSTS = Number(process.env.BENCH_BULK_POSTS ?? 10_000);
const BULK = {
  postsPerSPerAddress: 4.95,
  concurrency: 16,
  addresses: addresses(230, 16),
  oneAddress: addresses(250, 1),
};
/** The import of BULK_POSTS, from the pool of addresses. */
const BULK_IMPORT = `bulk publisher, ${BULK.addresses.length} addresses`;
/** Its rate with the default settings, against the same import with the limits off, in the same run. */
const BULK_GOAL_RATIO = 0.9;

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

/** What an attacker did: its requests' figures (paced-load's), and a sentence of anything else. */
interface AttackerRun {
  result: PacedResult | undefined;
  detail?: string;
}

interface Attack {
  name: string;
  /** What it does, in the report. */
  what: string;
  /** Its paced requests, checked against the limits; unless `run` attacks otherwise. */
  streams: PacedStream[];
  /** The addresses `run` uses, for the check that no two attacks share one. */
  addresses?: string[];
  /** How long it lasts, when not as long as the bystander's measure (a bulk import lasts until done). */
  durationS?: number;
  /** Work before it, not measured (the bus seeded). */
  prepare?: () => Promise<void>;
  /** The attacker, instead of the paced streams. */
  run?: (durationS: number, seed: number) => Promise<AttackerRun>;
  /** Once it is over: a sentence of what it did besides its requests. */
  after?: (attacker: AttackerRun) => Promise<string>;
}

/** What the new attacks (5 to 10) need: accounts, a note, the system's addresses. */
interface AttackContext {
  flipPath: string;
  flipHeaders: Record<string, string>;
  tagTotals: number[];
  gateway: string;
  streamerHeaders: Record<string, string>;
  /** The streamer's note updated with big bodies beside its unread streams, and those the bus is seeded with (one a seeding address). */
  bigNotePath: string;
  busNotePaths: string[];
  logoutHeaders: Record<string, string>;
  publisherHeaders: Record<string, string>;
  /** How many entries identity's revocation log holds now. */
  revocationEntries: () => Promise<number>;
  runPaced: (spec: PacedSpec) => Promise<Record<string, PacedResult>>;
  runUnread: (spec: UnreadStreamsSpec) => Promise<UnreadStreamsResult>;
}

/** Posts a publisher's stream created and published, in how long. */
export interface PublishRate {
  posts: number;
  seconds: number;
  postsPerS: number;
}

function publishRate(r: PacedResult | undefined): PublishRate {
  const posts = okCount(r);
  const seconds = r?.seconds ?? 0;
  return { posts, seconds, postsPerS: seconds ? round(posts / seconds, 1) : 0 };
}

const sayRate = (r: PublishRate) => `${r.posts} posts created and published in ${r.seconds} s: ${r.postsPerS} posts/s`;

/** One account's import: create and publish, 16 in flight, each address just under RATE_LIMIT. */
function bulkImport(headers: Record<string, string>, from: string[], total?: number): PacedStream {
  return {
    name: 'attacker',
    request: { kind: 'create and publish', headers, tag: 'import' },
    ratePerS: BULK.postsPerSPerAddress * from.length,
    concurrency: BULK.concurrency,
    addresses: from,
    total,
  };
}

/** How long the whole import may take: three times what its pace allows, and never less than an attack. */
const bulkImportS = (attackS: number) =>
  Math.max(attackS, Math.ceil((BULK_POSTS / (BULK.postsPerSPerAddress * BULK.addresses.length)) * 3));

function newAttacks(ctx: AttackContext, attackS: number): Attack[] {
  const bulk = (from: string[], total?: number) => bulkImport(ctx.publisherHeaders, from, total);
  const bulkS = bulkImportS(attackS);
  let logBefore = 0;
  /** The seeding of the bus before the resume flood, for its sentence. */
  let busSeeded: PacedResult | undefined;
  return [
    {
      name: 'botnet of wrong logins',
      what: `wrong logins for unknown accounts, ${BOTNET.concurrency} at a time as fast as answered, a fresh address (127.${BOTNET.block}.y.z) every ${BOTNET.perAddress} requests, each on a connection of its own`,
      streams: [
        {
          name: 'attacker',
          request: { kind: 'unknown login' },
          ratePerS: BOTNET.ratePerS,
          concurrency: BOTNET.concurrency,
          addresses: [],
          fresh: { block: BOTNET.block, perAddress: BOTNET.perAddress },
        },
      ],
      after: async (a) => `${Math.ceil((a.result?.sent ?? 0) / BOTNET.perAddress)} addresses used`,
    },
    {
      name: 'unread streams with big updates',
      what: `one account opens \`GET /api/realtime?topics=notes\` ${UNREAD.perAddress} times from each of ${UNREAD.addresses.length} addresses (${UNREAD.perAddress * UNREAD.addresses.length} tried), and as many anonymous \`topics=posts\` streams, on raw sockets that read the headers and never read again; then it updates one of its notes ${UNREAD.updates} times with a body of ${UNREAD.bodyBytes / 1000} kB`,
      streams: [],
      addresses: [...UNREAD.addresses, UNREAD.updateAddress],
      run: async (durationS) => {
        const r = await ctx.runUnread({
          gateway: ctx.gateway,
          groups: [
            {
              name: 'notes, the account',
              path: '/api/realtime?topics=notes',
              headers: ctx.streamerHeaders,
              addresses: UNREAD.addresses,
              perAddress: UNREAD.perAddress,
            },
            {
              name: 'posts, anonymous',
              path: '/api/realtime?topics=posts',
              headers: {},
              addresses: UNREAD.addresses,
              perAddress: UNREAD.perAddress,
            },
          ],
          update: {
            path: ctx.bigNotePath,
            headers: ctx.streamerHeaders,
            address: UNREAD.updateAddress,
            bodyBytes: UNREAD.bodyBytes,
            count: UNREAD.updates,
          },
          holdS: durationS,
        });
        const groups = Object.values(r.groups);
        const statuses: Record<string, number> = {};
        for (const g of groups)
          for (const [status, n] of Object.entries(g.statuses)) statuses[status] = (statuses[status] ?? 0) + n;
        const sent = groups.reduce((n, g) => n + g.tried, 0);
        return {
          result: {
            sent,
            rps: round(sent / durationS, 2),
            seconds: durationS,
            p50: r.updates.p50,
            p99: r.updates.max,
            succeeded: percentOf(statuses['200'] ?? 0, sent),
            statuses,
          },
          detail: `${Object.entries(r.groups)
            .map(
              ([name, g]) =>
                `${name}: ${g.tried} tried, ${statusList(g.statuses)}, ${g.endedByServer} of those held ended by the server`,
            )
            .join(
              '; ',
            )}; all answered in ${r.openedInS} s. The ${UNREAD.updates} updates: ${statusList(r.updates.statuses)}, p50 ${r.updates.p50} ms, slowest ${r.updates.max} ms`,
        };
      },
    },
    {
      name: 'resume flood',
      what: `anonymous \`topics=posts\` streams with \`Last-Event-ID: 0-0\`, ${RESUME.ratePerS} a second from ${RESUME.addresses.length} addresses, each read ${RESUME.readMs / 1000} s then closed; the bus seeded first with ${BUS_SEED.updates} note updates of ${BUS_SEED.bodyBytes / 1000} kB (not measured)`,
      streams: [
        {
          name: 'attacker',
          request: {
            kind: 'stream briefly',
            path: '/api/realtime?topics=posts',
            headers: { 'last-event-id': '0-0' },
            readMs: RESUME.readMs,
          },
          ratePerS: RESUME.ratePerS,
          concurrency: RESUME.concurrency,
          addresses: RESUME.addresses,
        },
      ],
      addresses: BUS_SEED.addresses,
      prepare: async () => {
        // A note for each address, so that no two updates race for one note.
        const n = BUS_SEED.addresses.length;
        const seeded = await ctx.runPaced({
          gateway: ctx.gateway,
          durationS: 600,
          seed: 7,
          streams: BUS_SEED.addresses.map((address, i) => ({
            name: 'seed',
            request: {
              kind: 'note update',
              path: ctx.busNotePaths[i] ?? '',
              headers: ctx.streamerHeaders,
              bodyBytes: BUS_SEED.bodyBytes,
            },
            ratePerS: BUS_SEED.ratePerS / n,
            concurrency: Math.max(1, Math.floor(BUS_SEED.concurrency / n)),
            addresses: [address],
            total: Math.ceil(BUS_SEED.updates / n),
          })),
        });
        busSeeded = seeded.seed;
      },
      after: async () =>
        `the bus seeded with ${okCount(busSeeded)} of ${BUS_SEED.updates} updates in ${busSeeded?.seconds ?? 0} s (${statusList(busSeeded?.statuses ?? {})})`,
    },
    {
      name: 'logout flood',
      what: `one access token sent to \`POST /api/auth/logout\` over and over, ${LOGOUT_FLOOD.ratePerS}/s from ${LOGOUT_FLOOD.addresses.length} addresses in turn, ${LOGOUT_FLOOD.concurrency} at a time`,
      streams: [
        {
          name: 'attacker',
          request: { kind: 'json', method: 'POST', path: '/api/auth/logout', headers: ctx.logoutHeaders, body: {} },
          ratePerS: LOGOUT_FLOOD.ratePerS,
          concurrency: LOGOUT_FLOOD.concurrency,
          addresses: LOGOUT_FLOOD.addresses,
        },
      ],
      prepare: async () => {
        logBefore = await ctx.revocationEntries();
      },
      after: async () =>
        `identity's revocation log (its collection): ${logBefore} entries before, ${await ctx.revocationEntries()} after`,
    },
    // From one address first: the bystander's measure without an attack was taken on the data as
    // it was before, and after the import its public list reads 10,000 posts more. Run after the
    // import, this attack's list came out at 2.04x; run before, at 1.03x.
    {
      name: 'bulk publisher, 1 address',
      what: `one account creates and publishes distinct posts from one address, for the bystander's measure: RATE_LIMIT allows it ${BULK.postsPerSPerAddress} posts/s`,
      streams: [bulk(BULK.oneAddress)],
      after: async (a) => sayRate(publishRate(a.result)),
    },
    {
      name: BULK_IMPORT,
      what: `one account creates and publishes ${BULK_POSTS} distinct posts (POST, then PUT status=published), ${BULK.concurrency} in flight, from ${BULK.addresses.length} addresses (an import's pool of workers), each at ${BULK.postsPerSPerAddress * 2} requests a second, just under RATE_LIMIT: at most ${round(BULK.postsPerSPerAddress * BULK.addresses.length, 1)} posts/s; PUBLIC_CHANGES_PER_MINUTE at its default`,
      streams: [bulk(BULK.addresses, BULK_POSTS)],
      durationS: bulkS,
      after: async (a) => sayRate(publishRate(a.result)),
    },
  ];
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

/** The /api/auth routes that check no password, on the default limit (gateway/src/route-table.ts). */
const NO_PASSWORD = /^\/api\/auth\/(?:refresh|logout|me|sessions(?:\/[^/]+)?)\/?$/;
const isAuth = (request: PacedRequest) =>
  request.kind === 'unknown login' ||
  ('path' in request && request.path.startsWith('/api/auth') && !NO_PASSWORD.test(request.path));
/** Requests one of a stream's counts for: a create and publish is two. */
const requestsEach = (request: PacedRequest) => (request.kind === 'create and publish' ? 2 : 1);

/**
 * Throws unless every address stays within the gateway's limits: at most this many requests in
 * any window of RATE_WINDOW_S. `spanS`: how long the streams' addresses are used in all (an
 * attack's are used in its phase only; the bystander's in every phase, so over any window).
 */
function withinLimits(streams: PacedStream[], spanS: number): void {
  const perAddress = new Map<string, number>();
  for (const s of streams) {
    const auth = isAuth(s.request);
    const limit = auth ? AUTH_RATE_LIMIT : RATE_LIMIT;
    // A botnet's addresses are each used for perAddress requests, and never again.
    if (s.fresh && s.fresh.perAddress * requestsEach(s.request) >= limit)
      throw new Error(`${s.name}: ${s.fresh.perAddress} requests an address, against a limit of ${limit}`);
    for (const address of s.addresses) {
      const key = `${auth ? 'auth' : 'default'} ${address}`;
      perAddress.set(key, (perAddress.get(key) ?? 0) + (s.ratePerS * requestsEach(s.request)) / s.addresses.length);
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
  /** What else the attack did or found (statuses per kind of stream, the revocation log, posts/s). */
  detail?: string;
  /** The one process's resident memory (VmRSS, sampled every 100 ms from the attack's start to its settle's end), in MB. */
  memory: { beforeMb: number; peakMb: number; afterMb: number; hwmMb: number };
  /** Whether the one process was still there and ready after it. */
  survived: boolean;
  goalMet: boolean;
}

/** The import with the default settings, and the same import with the limits off. */
export interface BulkImportFigures {
  defaults: PublishRate;
  limitsOff: PublishRate;
  ratio: number;
  goalRatio: number;
  goalMet: boolean;
}

export interface AttacksReport {
  /** When the import ran: its rate against the same import, limits off, on a system of its own. */
  bulkImport?: BulkImportFigures;
  posts: number;
  measureS: number;
  limits: { rateLimit: number; authRateLimit: number; windowS: number };
  bystanderRates: Record<BystanderRequest, number>;
  /** Whether the bystander's logins present the device token its first login was answered (X-Device-Token). */
  bystanderDevice: boolean;
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

/**
 * Scenario 11: every attack beside the bystander, then, when the import ran, the same import alone
 * on a system of its own with the limits off. The defences should cost an import little (goal:
 * ≥ BULK_GOAL_RATIO of that rate): both are measured in this run, on this machine, side by side.
 */
export async function runAttacks(o: AttackOptions): Promise<AttacksReport> {
  const { imported, ...report } = await attackBesideBystander(o);
  if (!imported) return report;
  o.log('bench: 11 attacks: the same import, the limits off, on a system of its own');
  const limitsOff = await importWithLimitsOff(o);
  const ratio = round(imported.postsPerS / (limitsOff.postsPerS || Number.NaN), 2);
  return {
    ...report,
    bulkImport: { defaults: imported, limitsOff, ratio, goalRatio: BULK_GOAL_RATIO, goalMet: ratio >= BULK_GOAL_RATIO },
  };
}

/** The import of scenario 11, alone: a system like the attacks' with ATTACK_POSTS stored, the limits off. */
async function importWithLimitsOff(o: AttackOptions): Promise<PublishRate> {
  const dbPrefix = `${o.dbPrefix}off_`;
  const system = await startSystem({
    dataDir: join(o.dataDir, 'limits-off'),
    mongoUrl: o.mongoUrl,
    storage: o.storage,
    jwtSecret: o.jwtSecret,
    dbPrefix,
    env: { LOG_LEVEL: 'warn', BCRYPT_COST: o.bcryptCost, ...LIMITS_OFF },
  });
  o.own(system);
  try {
    await seedPosts(withDatabase(o.mongoUrl, `${dbPrefix}posts`));
    const email = `publisher-off-${process.pid}@example.com`;
    const { token } = await postJson(`${system.gatewayUrl}/api/auth/register`, { email, password: 'bench-password' });
    const headers = { authorization: `Bearer ${String(token)}` };
    const r = await runPaced(o, {
      gateway: system.gatewayUrl,
      durationS: bulkImportS(RAMP_S + MEASURE_S + 1),
      seed: 1,
      streams: [bulkImport(headers, BULK.addresses, BULK_POSTS)],
    });
    return publishRate(r.attacker);
  } finally {
    await system.stop();
  }
}

async function attackBesideBystander(o: AttackOptions): Promise<AttacksReport & { imported?: PublishRate }> {
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
  // In one process, identity's log is read in process (its route for other processes is not
  // served): the log is counted in its collection, as scenario 12 does.
  const identityDb = await mongoose.createConnection(withDatabase(o.mongoUrl, `${o.dbPrefix}identity`)).asPromise();
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

    // The accounts of the newer attacks: the one whose streams are never read (and whose notes
    // seed the bus), the one whose access token is logged out over and over, the bulk publisher.
    const streamerHeaders = { authorization: `Bearer ${await register('streamer')}` };
    const noteOf = async (title: string) =>
      `/api/notes/${String((await postJson(`${gw}/api/notes`, { title, body: 'Updated with big bodies.' }, streamerHeaders))._id)}`;
    const bigNotePath = await noteOf('Big beside unread streams');
    const busNotePaths: string[] = [];
    for (const _ of BUS_SEED.addresses) busNotePaths.push(await noteOf('Big on the bus'));
    const logoutHeaders = { authorization: `Bearer ${await register('logout')}` };
    const publisherHeaders = { authorization: `Bearer ${await register('publisher')}` };

    // The bystander's device: it logged in before, and its logins give back the token it was
    // answered (identity's device tokens), the way a client that has logged in here before does.
    const firstLogin = await fetch(`${gw}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: bystanderEmail, password }),
    });
    if (!firstLogin.ok) throw new Error(`bystander login: ${firstLogin.status} ${await firstLogin.text()}`);
    const deviceToken = firstLogin.headers.get('x-device-token');
    const pid = system.processes.gateway.child.pid;

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
        request: {
          kind: 'json',
          method: 'POST',
          path: '/api/auth/login',
          headers: deviceToken ? { 'x-device-token': deviceToken } : {},
          body: { email: bystanderEmail, password },
        },
        ratePerS: BYSTANDER.loginPerS,
        concurrency: BYSTANDER.concurrency,
        addresses: BYSTANDER.loginAddresses,
      },
    ];
    const attackS = RAMP_S + MEASURE_S + 1;
    const all = [
      ...attacks({ flipPath, flipHeaders, tagTotals }),
      ...newAttacks(
        {
          flipPath,
          flipHeaders,
          tagTotals,
          gateway: gw,
          streamerHeaders,
          bigNotePath,
          busNotePaths,
          logoutHeaders,
          publisherHeaders,
          revocationEntries: () => identityDb.collection('revocations').countDocuments(),
          runPaced: (spec) => runPaced(o, spec),
          runUnread: (spec) => runScript(o.node, o.dist, 'unread-streams.js', [JSON.stringify(spec)]),
        },
        attackS,
      ),
    ];
    const planned = all.filter((a) => !ONLY_ATTACKS || ONLY_ATTACKS.includes(a.name));
    if (planned.length === 0) throw new Error(`BENCH_ATTACKS=${ONLY_ATTACKS}: names none of ${all.map((a) => a.name)}`);
    withinLimits(bystander, RATE_WINDOW_S);
    const used = new Set([...bystander.flatMap((s) => s.addresses), '127.0.0.1']);
    for (const attack of planned) {
      withinLimits(attack.streams, attack.durationS ?? attackS);
      for (const address of new Set([...attack.streams.flatMap((s) => s.addresses), ...(attack.addresses ?? [])])) {
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
    let imported: PublishRate | undefined;
    for (const [n, attack] of planned.entries()) {
      o.log(`bench: 11 attacks: ${attack.name}`);
      await attack.prepare?.();
      const memory = watchPeakMemory(pid);
      const durationS = attack.durationS ?? attackS;
      const seed = 100 * (n + 1);
      const attacker: Promise<AttackerRun> = attack.run
        ? attack.run(durationS, seed)
        : runPaced(o, { gateway: gw, durationS, seed, streams: attack.streams }).then((r) => ({ result: r.attacker }));
      await sleep(RAMP_S * 1000);
      const during = await measureBystander();
      const attackerRun = await attacker;
      const attackerResult = attackerRun.result;
      if (attack.name === BULK_IMPORT) imported = publishRate(attackerResult);
      await sleep(SETTLE_S * 1000);
      const peak = memory.stop();
      const survived =
        processName(pid) !== '' &&
        (await fetch(`${gw}/readyz`).then(
          (r) => r.ok,
          () => false,
        ));
      const detail = [attackerRun.detail, await attack.after?.(attackerRun).catch((err: Error) => err.message)]
        .filter(Boolean)
        .join('; ');

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
        detail: detail || undefined,
        memory: peak,
        survived,
        goalMet:
          survived &&
          bystanderSucceededPct >= SUCCESS_GOAL_PCT &&
          BYSTANDER_REQUESTS.every((name) => each[name].ratio <= BOUND[name]),
      });
      if (!survived) {
        o.log(`bench: 11 attacks: the one process did not survive ${attack.name}; the rest are not run`);
        break;
      }
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
      bystanderDevice: Boolean(deviceToken),
      without,
      attacks: figures,
      goal: ATTACKS_GOAL,
      imported,
    };
  } finally {
    await identityDb.close();
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
      )}; ${x.bystanderSucceededPct}% of its requests succeeded. Attacker: ${x.attacker.rps} rps, ${statusList(x.attacker.statuses)}. The one process: peak RSS ${x.memory.peakMb} MB (${x.memory.beforeMb} before), ${x.survived ? 'survived' : 'did not survive'}`,
      `reads worst ${worst(['read by id', 'note create', 'public list, page 1'])}×, login ${x.bystander.login.ratio}×, ${x.bystanderSucceededPct}% ok: goal ${x.goalMet ? 'met' : 'not met'}`,
      'reads ≤ 2×, login ≤ 3×, ≥ 99% ok',
    ]);
  }
  const b = a.bulkImport;
  if (b) {
    rows.push([
      '11 the import with the default settings, against the limits off',
      `${b.defaults.postsPerS} posts/s (${b.defaults.posts} in ${b.defaults.seconds} s) against ${b.limitsOff.postsPerS} posts/s (${b.limitsOff.posts} in ${b.limitsOff.seconds} s), this run`,
      `${b.ratio}×: goal ${b.goalMet ? 'met' : 'not met'}`,
      `≥ ${b.goalRatio}×`,
    ]);
  }
  return rows;
}

/** The whole of scenario 11, a table per attack. */
export function attackSection(a: AttacksReport): string {
  const lines = [
    '## 11 Attacks beside a bystander',
    '',
    `${a.posts} published posts; the gateway's limits on (${a.limits.rateLimit} requests and ${a.limits.authRateLimit} on /api/auth a ${a.limits.windowS} s window per address), every attacker within them. The bystander sends ${BYSTANDER_REQUESTS.map((n) => `${n} ${a.bystanderRates[n]}/s`).join(', ')}, and is measured for ${a.measureS} s alone, then beside each attack. Its logins ${a.bystanderDevice ? 'present the device token (`X-Device-Token`) its first login was answered, as a client that logged in here before does' : 'present no device token (identity answered none)'}. The one process's memory is its VmRSS, sampled every 100 ms from each attack's start until ${SETTLE_S} s after it. Goal: ${a.goal}, and the process survives.`,
    '',
  ];
  for (const x of a.attacks) {
    lines.push(
      `### ${x.name}: goal ${x.goalMet ? 'met' : 'not met'}`,
      '',
      `${x.what}. Attacker: ${x.attacker.sent} sent, ${x.attacker.rps} answered a second, p50 ${x.attacker.p50} ms; ${statusList(x.attacker.statuses)}.${x.detail ? ` ${x.detail.charAt(0).toUpperCase()}${x.detail.slice(1)}.` : ''}`,
      '',
      `The one process: RSS ${x.memory.beforeMb} MB before, peak ${x.memory.peakMb} MB, ${x.memory.afterMb} MB after (its peak since it started, VmHWM: ${x.memory.hwmMb} MB); ${x.survived ? 'it survived' : 'it did not survive'}.`,
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
  const b = a.bulkImport;
  if (b) {
    lines.push(
      `### The import, against the limits off: goal ${b.goalMet ? 'met' : 'not met'}`,
      '',
      `The same import (${BULK_POSTS} posts, ${BULK.concurrency} in flight, the same addresses and pace) alone on a system of its own with the limits off, right after the attacks: ${sayRate(b.limitsOff)}. With the default settings, above (the bystander beside it for its first ${a.measureS + RAMP_S} s): ${sayRate(b.defaults)}. Ratio ${b.ratio}× (goal ≥ ${b.goalRatio}×).`,
      '',
    );
  }
  return lines.join('\n');
}
