import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '@cs/devstack';
import { testStorageSettings } from '@cs/testkit';
import { afterAll, describe, expect, it } from '@jest/globals';

const out = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

const storage = testStorageSettings();

function runBench(
  script = 'run.js',
  knobs: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [join(REPO_ROOT, 'bench/dist/src', script)],
      {
        env: {
          ...process.env,
          BENCH_ROUNDS: '1',
          BENCH_DURATION_S: '0.5',
          BENCH_SOAK_S: '1',
          BENCH_SIZES: '20,40',
          BENCH_VOLUMES: '100,120',
          BENCH_MULTIPART_MB: '20',
          BENCH_MULTIPART_ROUNDS: '1',
          BENCH_OBSERVED_ROUNDS: '1',
          BENCH_OBSERVED_WARMUP_S: '0.5',
          BENCH_OUT: out,
          BENCH_BCRYPT_COST: '4',
          BENCH_ATTACK_POSTS: '200',
          BENCH_ATTACK_S: '1',
          BENCH_ATTACK_BUS_UPDATES: '16',
          BENCH_ATTACK_UNREAD_PER_ADDRESS: '3',
          BENCH_BULK_POSTS: '40',
          BENCH_REVOCATIONS: '40',
          BENCH_SESSIONS: '30',
          BENCH_STREAMS: '300',
          BENCH_SUBSCRIBERS: '50',
          BENCH_DELIVERY_S: '1',
          // The run's own servers, named explicitly: a spread of jest's process.env does not
          // carry every key the global setup set.
          MONGO_URL: process.env.MONGO_URL,
          S3_ENDPOINT: storage.endpoint,
          S3_ACCESS_KEY_ID: storage.accessKeyId,
          S3_SECRET_ACCESS_KEY: storage.secretAccessKey,
          STORAGE_REGION: storage.region,
          ...knobs,
        },
        // A guard against a hang, not a speed bound: about twice a run's time on a busy CI machine.
        timeout: 400_000,
      },
      (_err, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }),
    );
  });
}

/** That the run exited 0; on failure the diff shows what it said, and which scenario it was in. */
function expectExitedCleanly(run: { code: number | null; stdout: string; stderr: string }): void {
  const said = (text: string, chars: number) => (run.code === 0 ? '' : text.slice(-chars));
  expect({ code: run.code, stdout: said(run.stdout, 1500), stderr: said(run.stderr, 3000) }).toEqual({
    code: 0,
    stdout: '',
    stderr: '',
  });
}

/** That a report's table holds each of `parts`, each checked on its own. */
function expectToContainEach(table: string, parts: string[]): void {
  for (const part of parts) expect(table).toContain(part);
}

// biome-ignore lint/suspicious/noExplicitAny: the report is plain JSON
type Json = any;

const isRatio = (x: unknown) => typeof x === 'number' && Number.isFinite(x) && x > 0;

/** What scenario 11 reports, in a whole run or alone (BENCH_ATTACK_UNREAD_PER_ADDRESS 3, BENCH_BULK_POSTS 40). */
function expectAttacks(a: Json): void {
  expect(a.posts).toBe(200);
  expect(a.attacks.map((x: { name: string }) => x.name)).toEqual([
    'one address',
    '16 addresses',
    'flipping account',
    'distributed logins',
    'botnet of wrong logins',
    'unread streams with big updates',
    'resume flood',
    'logout flood',
    'bulk publisher, 1 address',
    'bulk publisher, 16 addresses',
  ]);
  for (const attack of a.attacks) {
    expect({ attack: attack.name, sent: attack.attacker.sent > 0 }).toEqual({ attack: attack.name, sent: true });
    for (const read of ['read by id', 'note create', 'public list, page 1'])
      expect({ attack: attack.name, read, sent: attack.bystander[read].sent > 0 }).toEqual({
        attack: attack.name,
        read,
        sent: true,
      });
    // The one process's memory was sampled while it ran, and the process was there after it.
    expect({
      attack: attack.name,
      sampled: attack.memory.beforeMb > 10 && attack.memory.peakMb >= attack.memory.beforeMb,
      survived: attack.survived,
    }).toEqual({ attack: attack.name, sampled: true, survived: true });
  }
  const attack = (name: string) => a.attacks.find((x: { name: string }) => x.name === name);
  // 69 notes streams of one account asked: 20 held, the rest refused by its cap; 69 anonymous held.
  expect(attack('unread streams with big updates').attacker.statuses).toMatchObject({ '200': 20 + 69, '429': 49 });
  // Every wrong login of the botnet came from an address used for 9 at most: none was rate limited.
  expect(attack('botnet of wrong logins').attacker.statuses['429']).toBeUndefined();
  // The bulk publisher published every post it was given, none refused; so did the same import
  // with the limits off, measured beside it.
  expect(attack('bulk publisher, 16 addresses').attacker.statuses).toEqual({ '200': 40 });
  expect(a.bulkImport.defaults.posts).toBe(40);
  expect(a.bulkImport.limitsOff.posts).toBe(40);
  expect(isRatio(a.bulkImport.ratio)).toBe(true);
  expect(a.bystanderDevice).toBe(true);
}

describe('npm run bench, with tiny durations', () => {
  it('when it runs end to end, then it writes a well-formed report of every scenario', async () => {
    const run = await runBench();
    expectExitedCleanly(run);

    const report = JSON.parse(readFileSync(join(out, 'latest.json'), 'utf8'));
    expect(report.machine).toMatchObject({
      cores: expect.any(Number),
      node: expect.stringMatching(/^v24\./),
      mongo: expect.any(String),
      storage: expect.any(String),
    });
    const s = report.scenarios;
    const ratios = {
      gatewayToBareProxy: s.gatewayHop.ratioGatewayToBareProxy,
      gatewayToDirect: s.gatewayHop.ratioGatewayToDirect,
      auth: s.authCost.ratio,
      login: s.login.ratio,
      uploadLinks: s.uploadLinks.ratio,
      multipart: s.multipart.ratio,
      notModified: s.notModified.ratio304To200,
      ...Object.fromEntries(
        (['hop', 'authenticated'] as const).flatMap((read) =>
          ['metrics', 'tracing, 10% sampled', 'tracing, every span'].map((v) => [
            `observability ${read} ${v}`,
            s.observability.ratios[read][v],
          ]),
        ),
      ),
    };
    for (const [name, ratio] of Object.entries(ratios))
      expect({ name, positive: isRatio(ratio) }).toEqual({ name, positive: true });
    for (const variant of [
      s.gatewayHop.gateway,
      s.gatewayHop.direct,
      s.gatewayHop['bare proxy'],
      s.authCost.verified,
      s.authCost.unverified,
      s.login.login,
      s.uploadLinks['upload-url'],
      s.uploadLinks['GET post'],
      s.multipart.ours,
      s.multipart.sdk,
      s.notModified['304'],
      s.notModified['200'],
    ]) {
      expect(variant.failures).toBe(0);
    }
    expect(s.publicList.sizes.map((x: { posts: number }) => x.posts)).toEqual([20, 40]);
    for (const size of s.publicList.sizes) {
      expect(size.dbQueryP50Ms).toBeGreaterThan(0);
      expect(size.overheadInServiceP50Ms).toBeGreaterThanOrEqual(0);
      expect(size.overheadRoundTripP50Ms).toBeGreaterThan(size.overheadInServiceP50Ms);
    }
    expect(s.volume.sizes.map((v: { posts: number }) => v.posts)).toEqual([expect.any(Number), 100, 120]);
    expect(s.volume.sizes[0].posts).toBeLessThan(100);
    for (const v of s.volume.sizes) {
      for (const read of [v.byId, v.listKept, v.listChanging]) {
        expect(read.requests).toBeGreaterThan(0);
        expect(read.non2xx + read.errors + read.timeouts).toBe(0);
      }
      expect(v.listChanging.changes).toBeGreaterThanOrEqual(1);
      expect(v.firstAfterChangeMs).toBeGreaterThan(0);
    }
    for (const when of ['idle', 'afterLoad']) {
      const processes = ['files', 'gateway', 'identity', 'notes', 'posts', 'realtime', 'ours together'];
      expect(Object.keys(s.memory[when])).toEqual(expect.arrayContaining(processes));
      for (const name of processes) {
        expect(s.memory[when][name].rssMb).toBeGreaterThan(10);
        expect(s.memory[when][name].pssMb).toBeGreaterThan(1);
      }
    }
    expect(Object.keys(s.memory.soak).sort()).toEqual(['files', 'gateway', 'identity', 'notes', 'posts', 'realtime']);
    expect(s.sessions.revocations.logEntries).toBeGreaterThanOrEqual(40);
    for (const ratio of [s.sessions.refreshToCreate, s.sessions.readsRatio]) expect(isRatio(ratio)).toBe(true);
    for (const variant of [s.sessions.refresh, s.sessions.create, s.sessions.readsWithList, s.sessions.readsEmpty]) {
      expect(variant.failures).toBe(0);
    }
    expect(s.realtime.idle.streams).toBe(300);
    // Node's own share, under the system's: a bare server holding the same streams grows too.
    expect(s.realtime.idle.bareKbPerStream).toBeGreaterThan(0);
    expect(s.realtime.delivery).toMatchObject({ subscribers: 50, posts: 10, missed: 0 });
    // From the answer it may be below 0: a publish answers after its listing's window, its event
    // often delivered by then. From the publish sent, never.
    expect(Number.isFinite(s.realtime.delivery.p99Ms)).toBe(true);
    expect(s.realtime.delivery.fromSentP99Ms).toBeGreaterThan(0);
    for (const ratio of [s.realtime.reads.ratio, s.realtime.writes.ratio]) expect(isRatio(ratio)).toBe(true);
    expect(s.attacks.posts).toBe(200);
    expectAttacks(s.attacks);
    for (const m of Object.values(s.memory.soak) as { warmMb: number; afterMb: number }[]) {
      expect(m.warmMb).toBeGreaterThan(10);
      expect(m.afterMb).toBeGreaterThan(10);
    }

    expectToContainEach(readFileSync(join(out, 'latest.md'), 'utf8'), [
      '| scenario | measured | ratio | goal |',
      '1 gateway hop',
      '10 embedded default, 120 posts',
      'memory, idle after start',
      '11 attack: distributed logins',
      '11 attack: bulk publisher, 1 address',
      '## 11 Attacks beside a bystander',
    ]);
  }, 420_000);
});

describe('npm run bench, scenario 11 alone, with tiny durations', () => {
  it("when BENCH_ONLY=attacks, then every attack ran beside the bystander, with the one process's peak memory", async () => {
    const alone = join(out, 'attacks-alone');
    const run = await runBench('run.js', { BENCH_ONLY: 'attacks', BENCH_OUT: alone });
    expectExitedCleanly(run);

    const report = JSON.parse(readFileSync(join(alone, 'latest.json'), 'utf8'));
    expectAttacks(report.scenarios.attacks);
    expectToContainEach(readFileSync(join(alone, 'latest.md'), 'utf8'), [
      '## 11 Attacks beside a bystander',
      '### bulk publisher, 1 address',
      'The one process: RSS',
      '### The import, against the limits off',
    ]);
  }, 420_000);
});

describe('npm run bench:scale, with tiny durations', () => {
  it('when it runs end to end, then it writes every figure: 1 and 2 replicas, the estimate, the hop and Redis', async () => {
    const run = await runBench('scale.js', { BENCH_WARMUP_S: '0', BENCH_CONNECTIONS: '4' });
    expectExitedCleanly(run);

    const report = JSON.parse(readFileSync(join(out, 'scale.json'), 'utf8'));
    for (const route of ['read', 'write']) {
      expect(isRatio(report.scale.ratios[route])).toBe(true);
      for (const replicas of ['1', '2']) {
        const measured = report.scale.routes[route][replicas];
        expect({ route, replicas, failures: measured.failures }).toEqual({ route, replicas, failures: 0 });
        // Each request cost its gateway and posts some CPU; HAProxy was measured (in 10 ms ticks,
        // which half a second of its light work may not reach).
        expect(measured.cpuMsPerRequest.gateway).toBeGreaterThan(0);
        expect(measured.cpuMsPerRequest.posts).toBeGreaterThan(0);
        expect(measured.cpuMsPerRequest.haproxy).toEqual(expect.any(Number));
      }
      // The balancer spread the load over both replicas of each kind.
      for (const kind of ['gateway', 'posts'])
        for (const n of report.scale.routes[route]['2'].perReplica[kind]) expect(n).toBeGreaterThan(0);
      expect(report.estimate[route].at.map((x: { machines: number }) => x.machines)).toEqual([1, 2, 4, 8, 16]);
      expect(report.estimate[route].perMachineRps).toBeGreaterThan(0);
    }
    for (const connections of ['4', '1']) {
      for (const variant of [
        report.balancerHop[connections].direct,
        report.balancerHop[connections].balanced,
        report.redisOnAuth[connections].memory,
        report.redisOnAuth[connections].redis,
      ])
        expect({ connections, failures: variant.failures, served: variant.requests > 0 }).toEqual({
          connections,
          failures: 0,
          served: true,
        });
    }
    expect(report.redisOnAuth.limiterCheck.redis.inRedis).toBeGreaterThanOrEqual(
      report.redisOnAuth.limiterCheck.redis.served,
    );

    expectToContainEach(readFileSync(join(out, 'scale.md'), 'utf8'), [
      '## Throughput at 1 and at 2 replicas of every process',
      '## What N replicas on N machines would reach: an estimate',
      '## The balancer hop',
      '## Redis on the auth route',
    ]);
  }, 240_000);
});
