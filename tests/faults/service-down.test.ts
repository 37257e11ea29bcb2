/**
 * Promise 3: a service goes away. Its routes answer JSON 502 at the gateway, every other route
 * keeps working, and when it comes back it is used again without restarting the gateway.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { type Outcome, SERVICE_OF, Traffic } from '../../bench/src/traffic';
import { type FaultSystem, recordFigures, sleep, startFaultSystem, until } from './harness';

let f: FaultSystem;
let traffic: Traffic;

beforeAll(async () => {
  f = await startFaultSystem();
  traffic = new Traffic({ baseUrl: f.system.gatewayUrl, workers: 4 });
  await traffic.prepare();
}, 120_000);
afterAll(async () => {
  await traffic?.stop();
  await f?.stop();
});

const ok = (o: Outcome) => o.status >= 200 && o.status < 300;

it('when the posts service is killed, then its routes answer JSON 502 and the others carry on; restarted, it is used again by the same gateway', async () => {
  const gatewayPid = f.system.processes.gateway.child.pid;
  traffic.start();
  await sleep(2000);

  const killedAt = Date.now();
  process.kill(f.system.processes.posts.child.pid, 'SIGKILL');
  await f.system.processes.posts.child.exited;
  await sleep(8000);

  const restartedAt = Date.now();
  await f.system.start('posts');
  const upAt = Date.now();
  const usedAgainAfterMs = await until(
    async () => (await traffic.fetch(`/api/posts?tag=${traffic.tag}`)).status === 200,
    10_000,
    20,
  );
  await sleep(2000);
  await traffic.stop();

  const during = traffic.outcomes.filter((o) => o.startedAt + o.ms >= killedAt && o.startedAt < restartedAt);
  const postsDuring = during.filter((o) => SERVICE_OF[o.op] === 'posts');
  const othersDuring = during.filter((o) => SERVICE_OF[o.op] !== 'posts');
  // Once the gateway knows posts is down (after one retry window), its requests fail at once.
  const knownDown = postsDuring.filter((o) => o.startedAt > killedAt + 4000);
  const after = traffic.between(upAt + (usedAgainAfterMs ?? 0) + 200);
  const verified = await traffic.verify();

  recordFigures('service-down', {
    what: 'posts service killed (SIGKILL) for 8 s under 4 workers of mixed traffic, then started again on its port',
    postsRoutesDuring: Traffic.summarize(postsDuring),
    postsRoutesOnceKnownDown: Traffic.summarize(knownDown),
    otherRoutesDuring: Traffic.summarize(othersDuring),
    serviceStartMs: upAt - restartedAt,
    usedAgainAfterMs,
    after: Traffic.summarize(after),
    writesVerified: verified.checked,
  });

  expect(postsDuring.length).toBeGreaterThan(4);
  expect(postsDuring.filter((o) => !(ok(o) || (o.status === 502 && o.json)))).toEqual([]);
  expect(postsDuring.filter((o) => o.status === 502).length).toBeGreaterThan(0);
  expect(knownDown.length).toBeGreaterThan(4);
  expect(knownDown.every((o) => o.status === 502 && o.ms < 500)).toBe(true);
  expect(othersDuring.length).toBeGreaterThan(50);
  expect(othersDuring.filter((o) => !ok(o))).toEqual([]);
  expect(usedAgainAfterMs).toBeDefined();
  expect(after.filter((o) => !ok(o))).toEqual([]);
  expect(after.filter((o) => SERVICE_OF[o.op] === 'posts').length).toBeGreaterThan(10);
  expect(f.system.processes.gateway.child.pid).toBe(gatewayPid);
  expect(verified.problems).toEqual([]);
});
