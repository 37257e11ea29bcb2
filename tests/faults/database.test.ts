/**
 * Promise 1: the database goes away in the middle of a steady mixed load. Every request either
 * succeeds or gets a JSON 503 within 2 s; /readyz turns false; when the server is back, requests
 * succeed again within 5 s, and no service was restarted. Also the nastier way to go away: paused,
 * its connections open but silent.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { type Outcome, Traffic } from '../../bench/src/traffic';
import { type FaultSystem, recordFigures, sleep, startFaultSystem, until } from './harness';

let f: FaultSystem;
let traffic: Traffic;

beforeAll(async () => {
  f = await startFaultSystem({ ownMongo: true });
  traffic = new Traffic({ baseUrl: f.system.gatewayUrl, workers: 6 });
  await traffic.prepare();
}, 120_000);
afterAll(async () => {
  await traffic?.stop();
  await f?.stop();
});

const ready = async () => (await fetch(`${f.system.gatewayUrl}/readyz`)).status;
const ok = (o: Outcome) => o.status >= 200 && o.status < 300;
const fastJson503 = (o: Outcome) => o.status === 503 && o.json && o.ms < 2000;
/** The promise for a paused database: an answer, a JSON 503 or the result, within 2 s. */
const PAUSED_ANSWER_BOUND_MS = 2000;

it('when the MongoDB-protocol server is killed under load and started again, then 2xx or a JSON 503 within 2 s, readiness follows, and requests succeed again within 5 s without a restart', async () => {
  const pids = Object.values(f.system.processes).map((p) => p.child.pid);
  const started = Date.now();
  traffic.start();
  await sleep(3000);

  const killedAt = Date.now();
  await f.mongo?.kill();
  const notReadyAfterMs = await until(async () => (await ready()) === 503, 10_000);
  await sleep(5000 - (Date.now() - killedAt));

  const restartedAt = Date.now();
  await f.mongo?.restart();
  const backAt = Date.now();
  // Recovered: a write and its read both succeed, through the gateway, as a user would do it.
  const recoveredAfterMs = await until(
    async () => {
      const created = await traffic.fetch('/api/posts', {
        method: 'POST',
        token: traffic.written.posts.values().next().value?.owner,
        body: { title: 'after the outage', body: 'written once the database is back' },
      });
      if (created.status !== 201) return false;
      return (await traffic.fetch(`/api/posts?tag=${traffic.tag}`)).status === 200;
    },
    10_000,
    100,
  );
  const readyAgainAfterMs = await until(async () => (await ready()) === 200, 10_000);
  const recoveredAt = backAt + (recoveredAfterMs ?? 0);
  await sleep(3000);
  await traffic.stop();

  const before = traffic.outcomes.filter((o) => o.startedAt + o.ms < killedAt);
  const during = traffic.outcomes.filter((o) => o.startedAt + o.ms >= killedAt && o.startedAt < recoveredAt);
  const after = traffic.between(recoveredAt + 500);
  const verified = await traffic.verify();

  recordFigures('database', {
    what: 'FerretDB killed (SIGKILL) for 5 s under 6 workers of mixed traffic, then started again on its port',
    before: Traffic.summarize(before),
    during: Traffic.summarize(during),
    after: Traffic.summarize(after),
    notReadyAfterMs,
    outageMs: restartedAt - killedAt,
    serverStartMs: backAt - restartedAt,
    recoveredAfterMs,
    readyAgainAfterMs,
    writesVerified: verified.checked,
    totalMs: Date.now() - started,
  });

  expect(before.length).toBeGreaterThan(50);
  expect(before.filter((o) => !ok(o))).toEqual([]);
  expect(during.length).toBeGreaterThan(20);
  expect(during.filter((o) => !ok(o) && !fastJson503(o))).toEqual([]);
  expect(during.filter(fastJson503).length).toBeGreaterThan(0);
  expect(notReadyAfterMs).toBeDefined();
  expect(recoveredAfterMs).toBeDefined();
  expect(recoveredAfterMs).toBeLessThanOrEqual(5000);
  expect(readyAgainAfterMs).toBeDefined();
  expect(after.length).toBeGreaterThan(50);
  expect(after.filter((o) => !ok(o))).toEqual([]);
  expect(verified.problems).toEqual([]);
  // Nothing was restarted: the same processes, all still running.
  expect(Object.values(f.system.processes).map((p) => p.child.pid)).toEqual(pids);
  expect(Object.values(f.system.processes).every((p) => p.child.process.exitCode === null)).toBe(true);
});

it('when the MongoDB-protocol server is paused (SIGSTOP) under load, then every request is answered within 2 s, with a JSON 503 or its result, and succeeds again once it resumes', async () => {
  const pids = Object.values(f.system.processes).map((p) => p.child.pid);
  const mongoPid = f.mongo?.pid as number;
  const from = Date.now();
  traffic.start();
  await sleep(2000);

  const pausedAt = Date.now();
  process.kill(mongoPid, 'SIGSTOP');
  await sleep(8000);
  const resumedAt = Date.now();
  process.kill(mongoPid, 'SIGCONT');
  const recoveredAfterMs = await until(
    async () => (await traffic.fetch(`/api/posts?tag=${traffic.tag}&limit=1`)).status === 200,
    10_000,
    100,
  );
  const recoveredAt = resumedAt + (recoveredAfterMs ?? 0);
  await sleep(3000);
  await traffic.stop();

  const run = traffic.between(from);
  const during = run.filter((o) => o.startedAt + o.ms >= pausedAt && o.startedAt < recoveredAt);
  const after = run.filter((o) => o.startedAt > recoveredAt + 500);
  const verified = await traffic.verify();
  recordFigures('database-paused', {
    what: 'FerretDB paused (SIGSTOP) for 8 s under 6 workers of mixed traffic, then resumed (SIGCONT): connections open, no answers',
    during: Traffic.summarize(during),
    after: Traffic.summarize(after),
    pausedMs: resumedAt - pausedAt,
    recoveredAfterMs,
    writesVerified: verified.checked,
  });

  // Nothing waits out the pause: every request is answered within 2 s, seen from the client. The
  // driver's heartbeat finds the silent server within UNRESPONSIVE_BOUND_MS (1.5 s; see
  // @cs/mongo) and fails what waits on it: a JSON 503. The rest is the hops and the service's work.
  expect(during.filter((o) => o.ms >= PAUSED_ANSWER_BOUND_MS)).toEqual([]);
  expect(during.filter((o) => !ok(o) && !(o.status === 503 && o.json))).toEqual([]);
  expect(during.filter((o) => o.status === 503).length).toBeGreaterThan(0);
  expect(recoveredAfterMs).toBeDefined();
  expect(recoveredAfterMs).toBeLessThanOrEqual(5000);
  expect(after.length).toBeGreaterThan(50);
  expect(after.filter((o) => !ok(o))).toEqual([]);
  expect(verified.problems).toEqual([]);
  expect(Object.values(f.system.processes).map((p) => p.child.pid)).toEqual(pids);
  // Each service that uses the database said so once in its log, not once per failed request.
  for (const name of ['identity', 'posts', 'notes', 'files'] as const) {
    const lost = readFileSync(f.system.processes[name].logFile, 'utf8')
      .split('\n')
      .filter((line) => line.includes('database stopped answering'))
      .map((line) => Date.parse((JSON.parse(line) as { time: string }).time))
      .filter((at) => at >= pausedAt);
    expect({ name, lost: lost.length }).toEqual({ name, lost: 1 });
  }
});
