/**
 * Promise 4: a rolling restart. Each service in turn gets SIGTERM under load, and a replacement
 * is started on the same port. No request fails: the ones in flight finish, and the gateway
 * resends the ones that found the port closed. Each old process exits 0 within its bound.
 */
import { SERVICES } from '@cs/devstack';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { type Outcome, SERVICE_OF, Traffic } from '../../bench/src/traffic';
import { type FaultSystem, recordFigures, sleep, startFaultSystem } from './harness';

let f: FaultSystem;
let traffic: Traffic;

beforeAll(async () => {
  f = await startFaultSystem();
  traffic = new Traffic({ baseUrl: f.system.gatewayUrl, workers: 8 });
  await traffic.prepare();
}, 120_000);
afterAll(async () => {
  await traffic?.stop();
  await f?.stop();
});

/** The services' shutdown bound (lifecycle's default). */
const SHUTDOWN_BOUND_MS = 10_000;

it('when each service in turn is sent SIGTERM under load and replaced on its port, then no request fails and each exits 0 within its bound', async () => {
  traffic.start();
  await sleep(2000);
  const restarts: Record<string, unknown>[] = [];

  for (const name of SERVICES) {
    const old = f.system.processes[name].child;
    const signalledAt = Date.now();
    process.kill(old.pid, 'SIGTERM');
    const [exitCode] = await Promise.all([old.exited, f.system.start(name)]);
    const exitedAt = Date.now();
    const inFlight = traffic.outcomes.filter(
      (o) => SERVICE_OF[o.op] === name && o.startedAt <= signalledAt && o.startedAt + o.ms >= signalledAt,
    );
    restarts.push({
      service: name,
      exitCode,
      exitedWithinMs: exitedAt - signalledAt,
      replacementPid: f.system.processes[name].child.pid,
      requestsInFlightAtSignal: inFlight.length,
      failedOfThose: inFlight.filter((o) => o.status < 200 || o.status >= 300).length,
    });
    await sleep(1500);
  }
  await sleep(1000);
  await traffic.stop();

  const failed = traffic.outcomes.filter((o: Outcome) => o.status < 200 || o.status >= 300);
  const verified = await traffic.verify();
  recordFigures('rolling-restart', {
    what: 'SIGTERM to identity, posts, notes, files and realtime in turn under 8 workers of mixed traffic, each replaced at once on its port',
    traffic: Traffic.summarize(traffic.outcomes),
    restarts,
    writesVerified: verified.checked,
  });

  for (const r of restarts) {
    expect(r.exitCode).toBe(0);
    expect(r.exitedWithinMs as number).toBeLessThan(SHUTDOWN_BOUND_MS);
  }
  expect(restarts.reduce((n, r) => n + (r.requestsInFlightAtSignal as number), 0)).toBeGreaterThan(0);
  expect(traffic.outcomes.length).toBeGreaterThan(500);
  expect(failed).toEqual([]);
  expect(verified.problems).toEqual([]);
});
