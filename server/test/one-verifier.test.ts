/**
 * The one process checks tokens with one verifier: identity's revocation log is followed once for
 * every part, not once by each (the gateway and four services, each once a second). Counted as
 * identity serves the log, from the process's own metrics.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningSystem } from '@cs/devstack';
import { startTestSystem } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

let system: RunningSystem;

beforeAll(async () => {
  system = await startTestSystem({ oneProcess: true, metrics: true });
}, 90_000);
afterAll(async () => {
  await system?.stop();
});

/** How many times identity has served its revocation log so far. */
async function logReads(): Promise<number> {
  const metricsUrl = Object.values(system.processes)
    .map((process) => process.metricsUrl)
    .find(Boolean);
  const text = await (await fetch(metricsUrl as string)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('http_server_request_duration_seconds_count{'))
    .filter((line) => line.includes('route="/internal/revocations"'))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

describe('the one process, and identity’s revocation log', () => {
  it('when it runs for 5 s, then the log is read about once a second, by one follower for every part', async () => {
    const before = await logReads();
    await sleep(5_000);
    const reads = (await logReads()) - before;

    // One follower reads it once a second: 5, or 6 with a read on each edge. Five would read 25.
    expect(reads).toBeGreaterThanOrEqual(1);
    expect(reads).toBeLessThanOrEqual(7);
  }, 30_000);
});
