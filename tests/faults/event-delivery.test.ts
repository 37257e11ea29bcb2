/**
 * Every committed write produces its event, even when the service that made it dies right after
 * the commit, before the event reached the bus. The fault is made outside the service: posts
 * reaches the bus's Redis (one of this test's) through a TCP relay of this test's, which drops
 * whatever posts sends from just before the publish on. The publish is answered (its event is
 * sent in the background), the event's try is lost at the relay, the service is SIGKILLed, and
 * nothing reached the bus. The service started again in its place, straight on Redis, sends the
 * event from its outbox, once the dead process's lease on that try has run out.
 */
import { join } from 'node:path';
import { REPO_ROOT, type RunningServer, startRedis } from '@cs/devstack';
import { api, StreamReader } from '@cs/testkit';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import {
  type FaultSystem,
  recordFigures,
  sleep,
  startFaultSystem,
  startTcpRelay,
  type TcpRelay,
  until,
} from './harness';

/** The bus's stream (the realtime service's default). */
const STREAM = 'realtime:events';
/**
 * A try taken by a process that died is taken again once its lease has run out: `LEASE_MS` of
 * @cs/outbox, 30 s. The replacement's polls find the entry then, with some slack for a slow run.
 */
const LEASE_MS = 30_000;
/** The first process: its own polls come no sooner than an hour, so only its immediate try counts. */
const FIRST = { EVENTS_INTERVAL: '1h' };
/** Its replacement: a poll every 500 ms finds the entry no live process is trying. */
const REPLACEMENT = { EVENTS_INTERVAL: '500ms' };

let redis: RunningServer;
let relay: TcpRelay;
let client: Redis;
/** The launcher reads this object each time it starts posts: the replacement gets its own. */
const postsEnv: Record<string, string> = {};
let f: FaultSystem;
let reader: StreamReader | undefined;

beforeAll(async () => {
  const dataDir = join(
    process.env.TEST_DATA_DIR ?? join(REPO_ROOT, '.data', 'faults'),
    `bus-${Date.now().toString(36)}`,
  );
  redis = await startRedis({ dataDir });
  relay = await startTcpRelay(redis.url);
  client = new Redis(redis.url);
  Object.assign(postsEnv, FIRST, { REDIS_URL: relay.url });
  f = await startFaultSystem({ busUrl: redis.url, processEnv: { posts: postsEnv } });
}, 120_000);
afterAll(async () => {
  reader?.close();
  await f?.stop();
  client?.disconnect();
  await relay?.close();
  await redis?.stop();
});

/** The events of post `id` in the bus's stream, as `topic.kind`. */
async function busEventsOf(id: string): Promise<string[]> {
  const entries = (await client.xrange(STREAM, '-', '+')) as [string, string[]][];
  return entries
    .map(([, fields]) => JSON.parse(fields[fields.indexOf('e') + 1] ?? '{}'))
    .filter((event) => (event.data as { _id?: string } | undefined)?._id === id)
    .map((event) => `${event.topic}.${event.kind}`);
}

it('when the posts service is killed (SIGKILL) after a publish was answered and before its event reached the bus, then the service started again sends it, once', async () => {
  const http = api(f.system.gatewayUrl);
  const tag = `crash-${Date.now().toString(36)}`;
  reader = await StreamReader.open(`${f.system.gatewayUrl}/api/realtime?topics=posts&tag=${tag}`);
  const email = `crash-${Date.now()}@example.com`;
  const { token } = (await http.post('/api/auth/register').send({ email, password: 'password-123' })).body;
  const auth = { Authorization: `Bearer ${token}` };
  const draft = await http
    .post('/api/posts')
    .set(auth)
    .send({ title: 'Crash', body: 'Committed, then killed.', tags: [tag] });
  expect(draft.status).toBe(201);
  const id = draft.body._id as string;
  // The draft's own event went through the relay: posts reaches the bus, and sends nothing more.
  expect(await until(async () => (await busEventsOf(id)).length === 1, 10_000)).toBeDefined();

  relay.hold();
  const published = await http.put(`/api/posts/${id}`).set(auth).send({ status: 'published' });
  expect(published.status).toBe(200);
  // The event's try was made, and lost at the relay: the process dies in the middle of it.
  const triedAfterMs = await until(async () => relay.dropped > 0, 5_000, 10);
  expect(triedAfterMs).toBeDefined();
  const posts = f.system.processes.posts.child;
  process.kill(posts.pid, 'SIGKILL');
  await posts.exited;
  const killedAt = Date.now();
  // Nothing sent it: the process that wrote it is gone, and nothing else polls that outbox.
  await sleep(1_500);
  const onBusBeforeRestart = await busEventsOf(id);
  const beforeRestart = reader.events.length;

  Object.assign(postsEnv, REPLACEMENT, { REDIS_URL: redis.url });
  await f.system.start('posts');
  const restartedAt = Date.now();
  const deliveredAfterMs = await until(async () => reader?.events.length === 1, LEASE_MS + 15_000, 20);
  // One event, not two: a later poll finds nothing left to send.
  await sleep(1_500);

  recordFigures('event-delivery', {
    what: 'posts cut off from the bus by a relay before a publish, SIGKILLed after it was answered and its event tried; started again',
    eventsBeforeRestart: beforeRestart,
    bytesDroppedAtRelay: relay.dropped,
    restartMs: restartedAt - killedAt,
    deliveredAfterRestartMs: deliveredAfterMs,
  });
  expect(onBusBeforeRestart).toEqual(['my-posts.upsert']);
  expect(beforeRestart).toBe(0);
  expect(deliveredAfterMs).toBeDefined();
  expect(reader.events).toHaveLength(1);
  expect(reader.events[0]).toMatchObject({ event: 'posts.upsert', data: published.body });
  expect(await busEventsOf(id)).toEqual(['my-posts.upsert', 'my-posts.upsert', 'posts.upsert']);
  // The post itself was committed before the kill, as the answer said.
  expect((await http.get(`/api/posts/${id}`)).body).toEqual(published.body);
});
