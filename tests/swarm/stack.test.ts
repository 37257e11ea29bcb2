/**
 * The Swarm deployment, checked on the stack that scripts/swarm-e2e.sh prepared (images, secrets,
 * the rendered stack file). One named case per promise of docker-compose.swarm.yml:
 *
 *  1. the stack deploys, and every part runs two tasks that are ready;
 *  2. the contract (../shared/contract) passes through the stack's balancer;
 *  3. a new version of every part (a new image tag, one `docker stack deploy`) rolls out one task
 *     at a time under reads and writes, and no request fails;
 *  4. a release whose health check never passes is rolled back by Swarm alone, and no request fails;
 *  5. a task killed with `docker kill` is replaced within 10 s; the only requests that fail are
 *     those in flight at the kill;
 *  6. the gateway and posts scale from 2 to 4 and back under traffic, and no request fails;
 *  7. a live-updates stream resumed with Last-Event-ID misses nothing while every realtime task is
 *     replaced;
 *  8. every write the traffic got a 2xx for reads back; no secret is in a container's environment.
 *
 * The steps build on each other (one stack, one traffic run): a step that throws stops the later
 * ones, and every figure goes to bench/results/swarm.md.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { compareIds } from '@cs/event-bus';
import { StreamReader } from '@cs/testkit';
import { afterAll, describe, expect } from '@jest/globals';
import { type Outcome, Traffic } from '../../bench/src/traffic';
import { need } from '../compose/compose';
import { api, expectStatus, GATEWAY, gatewayReady } from '../compose/http';
import { runSteps } from '../compose/steps';
import { report, say, seconds, writeReport } from './report';
import { Stack } from './swarm';

const REPO_ROOT = join(__dirname, '..', '..');
const CONTRACT_DIR = process.env.CONTRACT_DIR ?? join(REPO_ROOT, '..', 'shared', 'contract');
const REGISTRY = need('IMAGE_REGISTRY');
/** Ours, each with `deploy.replicas` 2 in docker-compose.swarm.yml. */
const PARTS = ['identity', 'posts', 'notes', 'files', 'realtime', 'gateway'] as const;
const REPLICAS = 2;
/** Stateful: one task each, on the labelled node. */
const DATA = ['mongo', 'storage', 'redis', 'mail'] as const;
/** How long a killed task may take to be replaced (the issue's bound). */
const WHOLE_AGAIN_MS = 10_000;

const image = (part: string, tag: string) => `${REGISTRY}/${part}:${tag}`;
const stack = new Stack();
const failed = (o: Outcome) => o.status < 200 || o.status >= 300;
const describeOutcome = (o: Outcome) =>
  `${new Date(o.startedAt).toISOString()} ${o.op} → ${o.status || ''}${o.error ? ` ${o.error}` : ''}${o.detail ? ` (${o.detail})` : ''} after ${o.ms} ms (request ${o.requestId})`;

/** What every deploy after the contract's gives `docker stack deploy`: the limits off for the traffic. */
const LIMITS_OFF = { AUTH_RATE_LIMIT: '0', RATE_LIMIT: '0', PUBLIC_CHANGES_PER_MINUTE: '0' };

const { step, check } = runSteps(report, say, writeReport);

/** The mixed traffic of steps 3 to 6, read back in step 8. */
let traffic: Traffic | undefined;

afterAll(async () => {
  await traffic?.stop();
  writeReport(true);
});

/** The requests of the traffic from `from` on, with what failed among them, as the report shows. */
function during(from: number, to = Date.now()) {
  const outcomes = traffic?.between(from, to) ?? [];
  return { requests: outcomes.length, failed: outcomes.filter(failed).map(describeOutcome) };
}

/** Logged by a part each time its database driver found the server not answering (`@cs/service`). */
const DATABASE_LOST = 'database stopped answering';

/**
 * What the balancer and every part logged from `from` on about `failures` (by request id, which
 * the traffic sends), and each time a part lost its database: why a request failed, for the report.
 */
async function loggedSince(from: number, failures: readonly string[]): Promise<string[]> {
  const ids = failures.flatMap((f) => /\(request ([\w-]+)\)/.exec(f)?.[1] ?? []);
  const lines = await Promise.all(
    ['balancer', ...PARTS].map((p) => stack.logLinesAbout(p, from, [...ids, DATABASE_LOST])),
  );
  return lines.flat();
}

describe('1. the stack, deployed', () => {
  const settledAt: Record<string, number> = {};
  let started = 0;

  step('deploy the stack at v1', async () => {
    started = Date.now();
    await stack.deploy({ IMAGE_TAG: 'v1' });
    await Promise.all([
      ...PARTS.map(async (p) => {
        settledAt[p] = await stack.settled(p, REPLICAS, { image: image(p, 'v1') });
      }),
      ...DATA.map(async (d) => {
        settledAt[d] = await stack.settled(d, 1);
      }),
    ]);
    await gatewayReady(120_000);
    report.deployed = {
      readySeconds: seconds(Date.now() - started),
      settledSeconds: Object.fromEntries(Object.entries(settledAt).map(([k, v]) => [k, seconds(v - started)])),
    };
    say(`deployed: ${JSON.stringify(report.deployed)}`);
  });

  for (const part of PARTS) {
    check(`when the stack is deployed, then ${part} runs ${REPLICAS} ready tasks of v1`, async () => {
      const running = await stack.running(part);
      expect(running.map((t) => t.image)).toEqual(Array(REPLICAS).fill(image(part, 'v1')));
    });
  }

  check('when the stack is deployed, then the balancer answers /readyz with 200', async () => {
    const res = await fetch(`${GATEWAY}/readyz`);
    expect(res.status).toBe(200);
  });
});

describe('2. the contract, through the balancer', () => {
  let outcome = { passed: 0, failed: 0, lines: [] as string[], seconds: 0 };

  step('run ../shared/contract against the stack', async () => {
    const started = Date.now();
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [join(CONTRACT_DIR, 'run.mjs'), GATEWAY], {
        env: { ...process.env, JWT_SECRET: need('CONTRACT_JWT_SECRET') },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.on('data', (c: Buffer) => {
        text += c.toString();
      });
      child.stderr.on('data', (c: Buffer) => {
        text += c.toString();
      });
      child.on('error', reject);
      child.on('close', () => resolve(text));
    });
    const last = /contract: (\d+) passed, (\d+) failed/.exec(output);
    if (!last) throw new Error(`the contract printed no result:\n${output.slice(-2000)}`);
    outcome = {
      passed: Number(last[1]),
      failed: Number(last[2]),
      lines: output.split('\n').filter((l) => l.startsWith('FAIL')),
      seconds: seconds(Date.now() - started),
    };
    report.contract = outcome;
    say(`contract: ${outcome.passed} passed, ${outcome.failed} failed in ${outcome.seconds} s`);
    for (const line of outcome.lines) say(`  ${line}`);
  });

  check('when the contract runs through the stack’s balancer, then every check passes', () => {
    expect(outcome.lines).toEqual([]);
    expect(outcome.failed).toBe(0);
    expect(outcome.passed).toBeGreaterThan(0);
  });
});

describe('3. a rolling update of every part, under traffic', () => {
  const rolledAt: Record<string, number> = {};
  let rollout: { requests: number; failed: string[] } = { requests: 0, failed: [] };

  step('start the traffic, and deploy v2 of every part', async () => {
    // The traffic logs in and writes all the time: the limits go off first (a rollout of the
    // gateway and posts, before the traffic starts).
    await stack.deploy({ IMAGE_TAG: 'v1', ...LIMITS_OFF });
    await Promise.all(PARTS.map((p) => stack.settled(p, REPLICAS, { image: image(p, 'v1') })));
    traffic = new Traffic({
      baseUrl: GATEWAY,
      workers: 6,
      tag: `swarm-${randomBytes(3).toString('hex')}`,
      // Attachments too: notes calls files for each, so the files rollout is felt there as well.
      mix: { attachNote: 4 },
    });
    await traffic.prepare();
    traffic.start();
    await sleep(3000);

    const started = Date.now();
    await stack.deploy({ IMAGE_TAG: 'v2', ...LIMITS_OFF });
    await Promise.all(
      PARTS.map(async (p) => {
        rolledAt[p] = await stack.settled(p, REPLICAS, { image: image(p, 'v2') });
      }),
    );
    await sleep(2000);
    rollout = during(started);
    report.rollout = {
      secondsPerPart: Object.fromEntries(PARTS.map((p) => [p, seconds((rolledAt[p] ?? 0) - started)])),
      wholeSeconds: seconds(Math.max(...Object.values(rolledAt)) - started),
      requests: rollout.requests,
      failed: rollout.failed.length,
      failures: rollout.failed,
      logged: await loggedSince(started, rollout.failed),
    };
    say(`rollout: ${JSON.stringify(report.rollout)}`);
  });

  for (const part of PARTS) {
    check(`when v2 is deployed, then ${part} runs ${REPLICAS} ready tasks of v2 and none of v1`, async () => {
      const running = await stack.running(part);
      expect(running.map((t) => t.image)).toEqual(Array(REPLICAS).fill(image(part, 'v2')));
    });
  }

  check('when every part rolls to v2 under traffic, then no request fails', () => {
    expect(rollout.requests).toBeGreaterThan(0);
    expect(rollout.failed).toEqual([]);
  });
});

describe('4. a release that is never ready', () => {
  let outcome: { state: string; running: string[]; requests: number; failed: string[] } = {
    state: '',
    running: [],
    requests: 0,
    failed: [],
  };

  step('roll posts to an image whose health check never passes', async () => {
    const started = Date.now();
    await stack.must([
      'service',
      'update',
      '--detach=true',
      '--image',
      image('posts', 'never-ready'),
      stack.service('posts'),
    ]);
    const status = await stack.updateReaches('posts', ['rollback_completed', 'completed', 'rollback_paused', 'paused']);
    const rolledBackAt = Date.now();
    await stack.settled('posts', REPLICAS, { image: image('posts', 'v2') });
    await sleep(2000);
    const seen = during(started);
    outcome = {
      state: status.state,
      running: (await stack.running('posts')).map((t) => t.image),
      requests: seen.requests,
      failed: seen.failed,
    };
    report.rollback = {
      updateState: status.state,
      message: status.message,
      rolledBackAfterSeconds: seconds(rolledBackAt - started),
      running: outcome.running,
      requests: seen.requests,
      failed: seen.failed.length,
      failures: seen.failed,
      logged: await loggedSince(started, seen.failed),
    };
    say(`rollback: ${JSON.stringify(report.rollback)}`);
  });

  check('when a release never becomes ready, then Swarm rolls it back on its own', () => {
    expect(outcome.state).toBe('rollback_completed');
  });

  check('when the release is rolled back, then the old version serves, with every task', () => {
    expect(outcome.running).toEqual(Array(REPLICAS).fill(image('posts', 'v2')));
  });

  check('when the release is rolled back under traffic, then no request fails', () => {
    expect(outcome.requests).toBeGreaterThan(0);
    expect(outcome.failed).toEqual([]);
  });
});

describe('5. a task killed', () => {
  /**
   * When the kill happened: no single moment the test can know, but a window that holds it, from
   * the `docker kill` command's start to the moment this host saw the process gone.
   */
  let kill = { from: 0, to: 0 };
  let wholeAgainMs = Number.POSITIVE_INFINITY;
  let failures: Outcome[] = [];
  const inFlightAtTheKill = (o: Outcome) => o.startedAt <= kill.to && o.startedAt + o.ms >= kill.from;

  step('kill a posts task with docker kill', async () => {
    const [victim] = await stack.containers('posts');
    if (!victim) throw new Error('no running posts container to kill');
    const before = new Set((await stack.running('posts')).map((t) => t.id));
    kill = await stack.kill(victim);
    // Whole again: two tasks running (so ready), one of them new.
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const running = await stack.running('posts');
      if (running.length === REPLICAS && running.some((t) => !before.has(t.id))) {
        wholeAgainMs = Date.now() - kill.from;
        break;
      }
      await sleep(200);
    }
    await sleep(3000);
    const outcomes = traffic?.between(kill.from - 30_000) ?? [];
    failures = outcomes.filter(failed);
    const requestIds = failures.flatMap((o) => /\(request ([\w-]+)\)/.exec(describeOutcome(o))?.[1] ?? []);
    report.kill = {
      service: 'posts',
      killWindow: `${new Date(kill.from).toISOString()} to ${new Date(kill.to).toISOString()} (${kill.to - kill.from} ms)`,
      wholeAgainSeconds: seconds(wholeAgainMs),
      requests: traffic?.between(kill.from).length ?? 0,
      failed: failures.length,
      failedInFlightAtTheKill: failures.filter(inFlightAtTheKill).length,
      failures: failures.map(describeOutcome),
      gatewayLoggedAboutThem: await stack.logLinesAbout('gateway', kill.from - 30_000, requestIds),
    };
    say(`kill: ${JSON.stringify(report.kill)}`);
  });

  check('when a task is killed, then Swarm replaces it and the service is whole again within 10 s', () => {
    expect(wholeAgainMs).toBeLessThanOrEqual(WHOLE_AGAIN_MS);
  });

  check('when a task is killed, then the only requests that fail are those in flight at the kill', () => {
    expect(failures.filter((o) => !inFlightAtTheKill(o)).map(describeOutcome)).toEqual([]);
  });
});

describe('6. the gateway and posts scaled from 2 to 4 and back', () => {
  let seen: { requests: number; failed: string[] } = { requests: 0, failed: [] };
  const at: Record<string, number> = {};

  step('scale both to 4, then back to 2, under traffic', async () => {
    const started = Date.now();
    await Promise.all([stack.scale('gateway', 4), stack.scale('posts', 4)]);
    await Promise.all(['gateway', 'posts'].map((s) => stack.settled(s, 4, { image: image(s, 'v2') })));
    at.up = Date.now();
    // Long enough for the balancer (every second) and the gateways (every connection) to use the new tasks.
    await sleep(5000);
    const down = Date.now();
    await Promise.all([stack.scale('gateway', REPLICAS), stack.scale('posts', REPLICAS)]);
    await Promise.all(['gateway', 'posts'].map((s) => stack.settled(s, REPLICAS, { image: image(s, 'v2') })));
    at.down = Date.now();
    await sleep(2000);
    seen = during(started);
    report.scale = {
      upSeconds: seconds(at.up - started),
      downSeconds: seconds(at.down - down),
      requests: seen.requests,
      failed: seen.failed.length,
      failures: seen.failed,
      logged: await loggedSince(started, seen.failed),
    };
    say(`scale: ${JSON.stringify(report.scale)}`);
  });

  check('when the gateway and posts scale to 4 and back under traffic, then no request fails', () => {
    expect(seen.requests).toBeGreaterThan(0);
    expect(seen.failed).toEqual([]);
  });

  check('when they are scaled back, then each runs 2 tasks again', async () => {
    expect((await stack.running('gateway')).length).toBe(REPLICAS);
    expect((await stack.running('posts')).length).toBe(REPLICAS);
  });
});

/**
 * What the author's stream may tell of a post created and then published: the draft, then the
 * publish; or the publish alone, when the create's event was told late, once the post was already
 * published (an event tells the post as it is then, and the two are then one event).
 */
const TOLD_IN_WRITE_ORDER = new Set(['draft,published', 'published']);

/** The statuses that `events` told of the post `id`, in their order. */
const statusesOf = (events: readonly { postId: string; status: string }[], id: string) =>
  events.filter(({ postId }) => postId === id).map(({ status }) => status);

describe('7. live updates across the replacement of every realtime task', () => {
  const written: string[] = [];
  /** What the stream sent, in its order: each event's id, name, post and the post's status. */
  const received: { id: string; event: string; postId: string; status: string }[] = [];
  let reconnects = 0;

  step('follow a tag and one’s own posts while posts are published and every realtime task is replaced', async () => {
    await traffic?.stop();
    report.traffic = Traffic.summarize(traffic?.outcomes ?? []);
    const tag = `live${randomBytes(3).toString('hex')}`;
    const email = `${tag}@example.com`;
    const password = `pw-${randomBytes(8).toString('hex')}`;
    expectStatus(await api('/api/auth/register', { method: 'POST', body: { email, password } }), 201, 'register');
    const token = expectStatus(
      await api('/api/auth/login', { method: 'POST', body: { email, password } }),
      200,
      'login',
    ).body.token as string;

    // `posts` for the tag, and `my-posts`: each post's draft and then its publish, so that the
    // order of one post's events can be checked, not only that each came.
    const path = `/api/realtime?topics=posts,my-posts&tag=${tag}`;
    const caller = { authorization: `Bearer ${token}` };
    let lastId: string | undefined;
    let reader = await StreamReader.open(`${GATEWAY}${path}`, caller);
    let taken = 0;
    let following = true;
    /** Reads what came, and reconnects with Last-Event-ID when the stream ended. */
    const follow = (async () => {
      while (following) {
        for (const e of reader.events.slice(taken)) {
          lastId = e.id ?? lastId;
          const post = e.data as { _id?: string; status?: string } | undefined;
          if (e.id && post?._id) {
            received.push({ id: e.id, event: e.event ?? '', postId: String(post._id), status: String(post.status) });
          }
        }
        taken = reader.events.length;
        if (reader.ended || !reader.response.ok) {
          reconnects += 1;
          await sleep(200);
          reader = await StreamReader.open(
            `${GATEWAY}${path}`,
            lastId ? { ...caller, 'last-event-id': lastId } : caller,
          ).catch(() => reader);
          taken = 0;
        }
        await sleep(50);
      }
    })();

    let writing = true;
    const write = (async () => {
      while (writing) {
        const post = await api('/api/posts', {
          method: 'POST',
          token,
          body: { title: `Live ${written.length}`, body: 'Across a realtime rollout.', tags: [tag] },
        });
        if (post.status === 201) {
          const id = String(post.body._id);
          const published = await api(`/api/posts/${id}`, { method: 'PUT', token, body: { status: 'published' } });
          if (published.status === 200) written.push(id);
        }
        await sleep(150);
      }
    })();

    const started = Date.now();
    await sleep(2000);
    await stack.replaceTasks('realtime');
    await stack.settled('realtime', REPLICAS, { image: image('realtime', 'v2') });
    const replacedAt = Date.now();
    await sleep(2000);
    writing = false;
    await write;
    const deadline = Date.now() + 15_000;
    const toldOf = () => new Set(received.filter(({ event }) => event === 'posts.upsert').map(({ postId }) => postId));
    while (written.some((id) => !toldOf().has(id)) && Date.now() < deadline) await sleep(100);
    following = false;
    await follow;
    reader.close();
    const told = received.filter(({ event }) => event === 'posts.upsert').map(({ postId }) => postId);
    const mine = received.filter(({ event }) => event === 'my-posts.upsert');
    report.liveUpdates = {
      replacedInSeconds: seconds(replacedAt - started),
      postsPublished: written.length,
      eventsReceived: received.length,
      reconnects,
      missing: written.filter((id) => !told.includes(id)).length,
      duplicates: received.length - new Set(received.map(({ id }) => id)).size,
      outOfWriteOrder: written.filter((id) => !TOLD_IN_WRITE_ORDER.has(statusesOf(mine, id).join())).length,
    };
    say(`live updates: ${JSON.stringify(report.liveUpdates)}`);
  });

  check('when every realtime task is replaced, then the stream was cut and resumed', () => {
    expect(reconnects).toBeGreaterThan(0);
  });

  check(
    'when the stream resumes with Last-Event-ID, then it goes on after the last event it sent: no event comes twice or out of the stream’s order',
    () => {
      const ids = received.map(({ id }) => id);
      expect(ids.length).toBeGreaterThan(0);
      expect(ids).toEqual([...new Set(ids)].sort(compareIds));
    },
  );

  check('when posts are published across the replacement, then each comes once on the tag’s stream', () => {
    const told = received.filter(({ event }) => event === 'posts.upsert').map(({ postId }) => postId);
    expect(written.length).toBeGreaterThan(0);
    expect([...told].sort()).toEqual([...written].sort());
  });

  check('when a post is created and then published, then its author’s stream tells them in that order', () => {
    const mine = received.filter(({ event }) => event === 'my-posts.upsert');
    const outOfOrder = written
      .map((id) => ({ id, statuses: statusesOf(mine, id).join() }))
      .filter(({ statuses }) => !TOLD_IN_WRITE_ORDER.has(statuses));
    expect(outOfOrder).toEqual([]);
  });
});

describe('8. what the stack kept, and where the secrets are', () => {
  let verified: { checked: number; problems: string[] } = { checked: 0, problems: [] };
  const exposed: string[] = [];
  const fromFiles: Record<string, string[]> = {};

  step('read back every write, and inspect every container', async () => {
    if (!traffic) throw new Error('no traffic ran');
    verified = await traffic.verify();
    report.readBack = { writesChecked: verified.checked, problems: verified.problems };
    say(`read back: ${JSON.stringify(report.readBack)}`);

    const secret = need('CONTRACT_JWT_SECRET');
    const ids = (await stack.must(['ps', '-q', '--filter', `label=com.docker.stack.namespace=${stack.name}`]))
      .trim()
      .split('\n')
      .filter(Boolean);
    for (const id of ids) {
      const inspect = await stack.must(['inspect', id]);
      const [container] = JSON.parse(inspect) as { Config: { Env: string[]; Labels: Record<string, string> } }[];
      const service = container?.Config.Labels['com.docker.swarm.service.name'] ?? id;
      if (inspect.includes(secret)) exposed.push(`the JWT secret in ${service}'s inspect output`);
      for (const entry of container?.Config.Env ?? []) {
        const [key = '', value = ''] = entry.split('=', 2);
        const given = ['JWT_SECRET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'SMTP_URL', 'ROOT_SECRET_ACCESS_KEY'];
        if (given.includes(key) && value !== '') exposed.push(`${key} in ${service}'s environment`);
        if (key.endsWith('_FILE')) fromFiles[service] = [...new Set([...(fromFiles[service] ?? []), key])];
      }
    }
    report.secrets = { containersInspected: ids.length, fromFiles, exposed };
    say(`secrets: ${JSON.stringify(report.secrets)}`);
  });

  check('when the traffic is over, then every write that got a 2xx reads back', () => {
    expect(verified.checked).toBeGreaterThan(0);
    expect(verified.problems).toEqual([]);
  });

  check('when the containers are inspected, then no secret is in any environment', () => {
    expect(exposed).toEqual([]);
    expect(Object.keys(fromFiles).length).toBeGreaterThan(0);
  });
});
