/**
 * Scenario 11's settings: the gateway's limits the attacks stay within, the bystander's pace, and
 * every attack's rate, concurrency and addresses.
 */

/** Published posts stored before any attack. */
export const ATTACK_POSTS = Number(process.env.BENCH_ATTACK_POSTS ?? 10_000);
/** Only the attacks named here (separated by semicolons, as names have commas; all by default), for a run of one or two. */
export const ONLY_ATTACKS = process.env.BENCH_ATTACKS?.split(';').map((name) => name.trim());
/** How long the bystander measures, alone and beside each attack. */
export const MEASURE_S = Number(process.env.BENCH_ATTACK_S ?? 25);
/** Each attack runs this long before the bystander starts measuring, and 1 s after it stops. */
export const RAMP_S = Math.min(3, MEASURE_S);
/** A pause after each attack, for the work it queued to drain before the next one. */
export const SETTLE_S = Math.min(5, MEASURE_S);
/** The bystander's own warm-up, before its figures without attack (not reported). */
export const WARMUP_S = Math.min(5, MEASURE_S);

/** The gateway's defaults (gateway/src/config.ts), set explicitly: what the attacks stay within. */
export const RATE_LIMIT = 600;
export const AUTH_RATE_LIMIT = 10;
export const RATE_WINDOW_S = 60;

/** The tags the seeded posts carry, one each in turn; the list attackers pick among them. */
export const TAGS = ['news', 'travel', 'food', 'tech'];

/**
 * The bystander, at a modest fixed pace: its reads and note creates from one address (8 a second
 * there, 480 a minute, under RATE_LIMIT); its logins in turn from 8 addresses of its own, each
 * 5 a minute under AUTH_RATE_LIMIT (one address would allow it 10 logins a minute, too few to time).
 */
export const BYSTANDER = {
  address: '127.0.0.2',
  loginAddresses: addresses(3, 8),
  byIdPerS: 3,
  notePerS: 2,
  listPerS: 3,
  loginPerS: 2 / 3,
  concurrency: 8,
};

/** 1 and 2: list pages that are not kept, at this pace from each attacking address. */
export const LIST_ATTACK = { ratePerS: 6, concurrency: 8, maxLimit: 50 };
export const LIST_ATTACK_ADDRESSES = 16;
/** 3: one account flips its own post between draft and published (1,300 in 15 s). */
export const FLIP_ATTACK = { ratePerS: 87, concurrency: 8, addresses: 16 };
/** 4: wrong logins for accounts that do not exist, one at a time from each of 48 addresses. */
export const LOGIN_ATTACK = { ratePerS: 0.3, concurrency: 1, addresses: 48 };
/**
 * 5: a botnet of wrong logins for accounts that do not exist: 48 at a time, as fast as they are
 * answered, each address (127.1.y.z, never one used before) sending 9 and then giving way to the
 * next, within AUTH_RATE_LIMIT: no limit per address can stop it.
 */
export const BOTNET = { concurrency: 48, perAddress: 9, block: 1, ratePerS: 2000 };
/**
 * 6: one account's notes streams, never read, 200 from each of 23 addresses (4,600 tried: the
 * attack that took the process down), and as many anonymous posts streams from the same
 * addresses; then 20 updates of one of the account's notes with a body of 98 kB.
 */
export const UNREAD = {
  addresses: addresses(160, 23),
  perAddress: Number(process.env.BENCH_ATTACK_UNREAD_PER_ADDRESS ?? 200),
  updateAddress: '127.0.0.183',
  updates: 20,
  bodyBytes: 98_000,
};
/** 7: anonymous posts streams that resume from the bus's start (`Last-Event-ID: 0-0`), each read 1 s then closed. */
export const RESUME = { ratePerS: 2, concurrency: 8, readMs: 1000, addresses: addresses(190, 2) };
/** Before 7, not measured: the bus seeded with note updates of 98 kB, from 8 addresses. */
export const BUS_SEED = {
  updates: Number(process.env.BENCH_ATTACK_BUS_UPDATES ?? 1000),
  bodyBytes: 98_000,
  ratePerS: 8 * 9.5,
  concurrency: 8,
  addresses: addresses(200, 8),
};
/** 8: one access token logged out over and over, 9.5/s from each of 16 addresses (logout is on the default limit). */
export const LOGOUT_FLOOD = { ratePerS: 16 * 9.5, concurrency: 16, addresses: addresses(210, 16) };
/**
 * 9 and 10: one account creates and publishes BULK_POSTS distinct posts, 16 in flight as scenario
 * 14 seeds, each address at 9.9 requests a second (a create and a publish: 4.95 posts), just under
 * RATE_LIMIT: from one address for MEASURE_S, then from 16 (an import's pool of workers).
 */
export const BULK_POSTS = Number(process.env.BENCH_BULK_POSTS ?? 10_000);
export const BULK = {
  postsPerSPerAddress: 4.95,
  concurrency: 16,
  addresses: addresses(230, 16),
  oneAddress: addresses(250, 1),
};
/** The import of BULK_POSTS, from the pool of addresses. */
export const BULK_IMPORT = `bulk publisher, ${BULK.addresses.length} addresses`;
/** Its rate with the default settings, against the same import with the limits off, in the same run. */
export const BULK_GOAL_RATIO = 0.9;

/** `n` loopback addresses from 127.0.0.`first`. */
export function addresses(first: number, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `127.0.0.${first + i}`);
}

export const BYSTANDER_REQUESTS = ['read by id', 'note create', 'public list, page 1', 'login'] as const;
export type BystanderRequest = (typeof BYSTANDER_REQUESTS)[number];
/** The goal's bound on each bystander request's p50, as a multiple of its p50 without attack. */
export const BOUND: Record<BystanderRequest, number> = {
  'read by id': 2,
  'note create': 2,
  'public list, page 1': 2,
  login: 3,
};
export const SUCCESS_GOAL_PCT = 99;
export const ATTACKS_GOAL =
  'beside each attack, the bystander p50 of a read by id, a note create and the public list within 2× of its p50 without attack, a login within 3×; ≥ 99% of its requests succeed';
