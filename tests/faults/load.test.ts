/**
 * Promise 5: nothing is lost under load. 40 workers (4x the benchmark's concurrency of 10) of
 * mixed reads and writes for 60 s, with bursts of concurrent registrations of one address:
 * no 5xx, every write that got a 2xx reads back with exactly the data sent, one user per address.
 */
import { withDatabase } from '@cs/devstack';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import mongoose from 'mongoose';
import { Traffic } from '../../bench/src/traffic';
import { type FaultSystem, recordFigures, sleep, startFaultSystem } from './harness';

/** The benchmark's concurrency (bench/src/run.ts, C), times four. */
const WORKERS = 4 * 10;
const DURATION_MS = Number(process.env.FAULTS_LOAD_MS ?? 60_000);
const BURST = 10;

let f: FaultSystem;
let traffic: Traffic;

beforeAll(async () => {
  f = await startFaultSystem();
  traffic = new Traffic({ baseUrl: f.system.gatewayUrl, workers: WORKERS, requestTimeoutMs: 15_000 });
  await traffic.prepare();
}, 120_000);
afterAll(async () => {
  await traffic?.stop();
  await f?.stop();
});

it('when 40 workers write and read for 60 s, with concurrent registrations of one address, then no 5xx, every 2xx write reads back exactly, and no address has two users', async () => {
  traffic.start();
  const started = Date.now();
  const bursts: number[][] = [];
  let burst = 0;
  while (Date.now() - started < DURATION_MS) {
    await sleep(5000);
    burst += 1;
    // The same address, in several letter cases, at the same moment.
    const email = `race-${burst}-${traffic.tag}@example.com`;
    const answers = await Promise.all(
      Array.from({ length: BURST }, (_, i) =>
        traffic.fetch('/api/auth/register', {
          method: 'POST',
          body: { email: i % 2 ? email.toUpperCase() : email, password: `password-${i}` },
        }),
      ),
    );
    bursts.push(answers.map((a) => a.status));
  }
  await traffic.stop();
  const elapsedMs = Date.now() - started;

  const verified = await traffic.verify();
  // Straight from the identity service's database: what the API cannot show.
  const identity = await mongoose.createConnection(withDatabase(f.mongoUrl, `${f.dbPrefix}identity`)).asPromise();
  let duplicates: unknown[];
  let raceUsers: number;
  try {
    const users = identity.db?.collection('users');
    if (!users) throw new Error('no identity database');
    duplicates = await users
      .aggregate([{ $group: { _id: '$email', n: { $sum: 1 } } }, { $match: { n: { $gt: 1 } } }])
      .toArray();
    raceUsers = await users.countDocuments({ email: { $regex: '^race-' } });
  } finally {
    await identity.close();
  }

  const summary = Traffic.summarize(traffic.outcomes);
  recordFigures('load', {
    what: `${WORKERS} workers of mixed traffic for ${Math.round(elapsedMs / 1000)} s, and ${bursts.length} bursts of ${BURST} concurrent registrations of one address`,
    traffic: summary,
    requestsPerSecond: Math.round(summary.requests / (elapsedMs / 1000)),
    registrationBursts: bursts.map((b) => b.join(' ')).join(' | '),
    writesVerified: verified.checked,
    problems: verified.problems.length,
    duplicateUsers: duplicates.length,
  });

  expect(summary.requests).toBeGreaterThan((DURATION_MS / 1000) * 20);
  expect(traffic.outcomes.filter((o) => o.status === 0 || o.status >= 500)).toEqual([]);
  expect(traffic.outcomes.filter((o) => o.status >= 400)).toEqual([]);
  expect(summary.notJson).toBe(0);
  for (const statuses of bursts) {
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 400)).toHaveLength(BURST - 1);
  }
  // Creates are 18% of the mix; every one that got a 201 is in the ledger.
  expect(verified.checked).toBeGreaterThan(summary.requests * 0.1);
  expect(verified.problems).toEqual([]);
  expect(duplicates).toEqual([]);
  expect(raceUsers).toBe(bursts.length);
});
