/**
 * Scenario 12, sessions (issue 33), on two systems of its own, side by side:
 * - refresh throughput against a post create through the gateway (both writes), on one system:
 *   goal ≥ 1. Each refresh spends its token and the next one sends the successor; the sessions
 *   are many, so that none passes identity's refresh limit (30 a minute).
 * - an authenticated read (GET /api/posts/my-posts, verified by the gateway and by posts) on a
 *   system whose revocation list holds REVOCATIONS entries, made through the API (logouts, and
 *   "log out everywhere"), against the same read on a system whose list is empty: goal ≥ 0.97.
 *
 * Registration hashes passwords; these systems use bcrypt cost 4 for it, which no measured request
 * pays (neither refresh, nor create, nor a read hashes anything).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type RunningSystem, startSystem, withDatabase } from '@cs/devstack';
import mongoose from 'mongoose';
import { LIMITS_OFF } from '../limits-off';
import type { LoadResult, LoadSpec } from '../load';
import {
  interleave as interleaveRounds,
  type LoadSummary,
  runScript,
  type ScenarioOptions,
  summarize,
  type Variant,
} from '../rounds';
import { pairedRatio, round } from '../stats';

export const REVOCATIONS = Number(process.env.BENCH_REVOCATIONS ?? 10_000);
/** Sessions the refreshes cycle through: enough that none passes the refresh limit in a run. */
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 1_000);
const SETUP_CONCURRENCY = 16;
export const SESSIONS_GOAL = { refreshToCreate: 1, readsWithList: 0.97 } as const;

export type SessionsOptions = ScenarioOptions;

type Measured = LoadSummary;

export interface SessionsReport {
  refresh: Measured;
  create: Measured;
  refreshToCreate: number;
  readsWithList: Measured;
  readsEmpty: Measured;
  readsRatio: number;
  /** Entries of identity's log on the system with the list, and what made them. */
  revocations: { logEntries: number; made: string };
}

const child = (o: SessionsOptions, script: string, spec: unknown) =>
  runScript(o.node, o.dist, script, [JSON.stringify(spec)]);

/** The variants interleaved (rounds.ts): each one's summary, and its rounds for paired ratios. */
async function interleave(rounds: number, variants: Variant<LoadResult>[]) {
  const results = await interleaveRounds(variants, rounds);
  const measured = (rs: LoadResult[]): Measured => {
    const s = summarize(rs);
    return { ...s, rps: round(s.rps), p50: round(s.p50, 2), p99: round(s.p99, 2) };
  };
  return Object.fromEntries(Object.entries(results).map(([name, rs]) => [name, { measured: measured(rs), rs }]));
}

/** Tries a refused request is sent again (a 429 or 503 with Retry-After, as a client would). */
const SEND_TRIES = 5;

async function send(url: string, init: { method: string; body?: unknown; token?: string }, tries = SEND_TRIES) {
  const res = await fetch(url, {
    method: init.method,
    headers: {
      'content-type': 'application/json',
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await res.text();
  const retryAfterS = Number(res.headers.get('retry-after'));
  if ((res.status === 429 || res.status === 503) && retryAfterS > 0 && tries > 1) {
    // Identity sheds password work when its line is full: the setup waits as it is told.
    await sleep(retryAfterS * 1000);
    return send(url, init, tries - 1);
  }
  if (!res.ok) throw new Error(`${init.method} ${url}: ${res.status} ${text}`);
  return text ? (JSON.parse(text) as Record<string, string>) : {};
}

/** Runs `work(i)` for i in 0..n-1, `SETUP_CONCURRENCY` at a time. */
async function each(n: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: SETUP_CONCURRENCY }, async () => {
      while (next < n) await work(next++);
    }),
  );
}

export async function runSessions(o: SessionsOptions): Promise<SessionsReport> {
  const systemOf = (name: string) =>
    startSystem({
      dataDir: join(o.dataDir, name),
      mongoUrl: o.mongoUrl,
      storage: o.storage,
      jwtSecret: o.jwtSecret,
      dbPrefix: `${o.dbPrefix}${name}_`,
      env: {
        LOG_LEVEL: 'warn',
        ...LIMITS_OFF,
        BCRYPT_COST: '4',
      },
    });
  const [full, empty] = await Promise.all([systemOf('full'), systemOf('empty')]);
  o.own(full);
  o.own(empty);
  const password = 'bench-password';
  const register = async (gw: string, who: string) =>
    send(`${gw}/api/auth/register`, { method: 'POST', body: { email: `${who}-${process.pid}@example.com`, password } });

  // The revocations, through the API: half by logout with the Bearer token (one token each), half
  // by "log out everywhere" (every token of a user).
  const half = Math.floor(REVOCATIONS / 2);
  await each(REVOCATIONS, async (i) => {
    const pair = await register(full.gatewayUrl, `revoked-${i}`);
    if (i < half) {
      await send(`${full.gatewayUrl}/api/auth/logout`, {
        method: 'POST',
        body: { refreshToken: pair.refreshToken },
        token: pair.token,
      });
    } else {
      await send(`${full.gatewayUrl}/api/auth/sessions`, { method: 'DELETE', token: pair.token });
    }
  });
  // Counted in identity's database: in one process (the default) identity has no address of its own.
  const identityDb = await mongoose
    .createConnection(withDatabase(o.mongoUrl, `${o.dbPrefix}full_identity`))
    .asPromise();
  const logEntries = await identityDb.collection('revocations').countDocuments();
  await identityDb.close();
  o.log(`bench: 12 sessions: ${logEntries} revocations logged`);
  // A second or two for every process to read them.
  await sleep(3000);

  const readerOf = async (system: RunningSystem, name: string) =>
    String((await register(system.gatewayUrl, name)).token);
  const [fullReader, emptyReader] = await Promise.all([readerOf(full, 'reader-full'), readerOf(empty, 'reader-empty')]);
  const read = (system: RunningSystem, token: string) =>
    child(o, 'load.js', {
      url: `${system.gatewayUrl}/api/posts/my-posts`,
      headers: { authorization: `Bearer ${token}` },
      connections: o.connections,
      durationS: o.durationS,
    } satisfies LoadSpec);
  const reads = await interleave(o.rounds, [
    { name: 'with list', run: () => read(full, fullReader) },
    { name: 'empty', run: () => read(empty, emptyReader) },
  ]);

  // Refresh against create, on the system with the empty list.
  const tokensFile = join(o.dataDir, 'refresh-tokens.json');
  const refreshTokens: string[] = [];
  await each(SESSIONS, async (i) => {
    refreshTokens[i] = (await register(empty.gatewayUrl, `session-${i}`)).refreshToken as string;
  });
  writeFileSync(tokensFile, JSON.stringify(refreshTokens));
  const spec = { url: empty.gatewayUrl, connections: o.connections, durationS: o.durationS };
  const writes = await interleave(o.rounds, [
    { name: 'refresh', run: () => child(o, 'write-load.js', { ...spec, mode: 'refresh', tokensFile }) },
    { name: 'create', run: () => child(o, 'write-load.js', { ...spec, mode: 'create', token: emptyReader }) },
  ]);

  const get = (r: typeof reads, name: string) => r[name] as { measured: Measured; rs: LoadResult[] };
  return {
    refresh: get(writes, 'refresh').measured,
    create: get(writes, 'create').measured,
    refreshToCreate: pairedRatio(
      get(writes, 'refresh').rs.map((x) => x.rps),
      get(writes, 'create').rs.map((x) => x.rps),
    ),
    readsWithList: get(reads, 'with list').measured,
    readsEmpty: get(reads, 'empty').measured,
    readsRatio: pairedRatio(
      get(reads, 'with list').rs.map((x) => x.rps),
      get(reads, 'empty').rs.map((x) => x.rps),
    ),
    revocations: {
      logEntries,
      made: `${half} logouts with a Bearer token and ${REVOCATIONS - half} "log out everywhere", through the gateway`,
    },
  };
}

/** The report's rows: scenario, measured, ratio, goal. */
export function sessionRows(s: SessionsReport): [string, string, string, string][] {
  return [
    [
      '12 refresh vs post create (writes, through the gateway)',
      `${s.refresh.rps} vs ${s.create.rps} req/s; p50 ${s.refresh.p50} vs ${s.create.p50} ms`,
      String(s.refreshToCreate),
      `≥ ${SESSIONS_GOAL.refreshToCreate}`,
    ],
    [
      `12 authenticated read, ${s.revocations.logEntries} revocations vs none`,
      `${s.readsWithList.rps} vs ${s.readsEmpty.rps} req/s; p50 ${s.readsWithList.p50} vs ${s.readsEmpty.p50} ms`,
      String(s.readsRatio),
      `≥ ${SESSIONS_GOAL.readsWithList}`,
    ],
  ];
}
