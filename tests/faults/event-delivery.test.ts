/**
 * Every committed write produces its event, even when the service that made it dies right after
 * the commit: the posts service's relay is held back through configuration (EVENTS_DISPATCH_DELAY,
 * and polling far apart), the write is answered, the service is SIGKILLed before it sends
 * anything, and the service started again in its place sends the event from its outbox.
 */
import { api, StreamReader } from '@cs/testkit';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { type FaultSystem, recordFigures, sleep, startFaultSystem, until } from './harness';

/** The first posts process: neither its immediate try nor its poll comes before the kill. */
const HELD_BACK = { EVENTS_DISPATCH_DELAY: '1h', EVENTS_INTERVAL: '1h' };
/** Its replacement: a poll every 500 ms finds the entry no live process tried. */
const REPLACEMENT = { EVENTS_DISPATCH_DELAY: '0ms', EVENTS_INTERVAL: '500ms' };

const postsEnv: Record<string, string> = { ...HELD_BACK };
let f: FaultSystem;
let reader: StreamReader | undefined;

beforeAll(async () => {
  // The launcher reads this object each time it starts posts: the replacement gets REPLACEMENT.
  f = await startFaultSystem({ processEnv: { posts: postsEnv } });
}, 120_000);
afterAll(async () => {
  reader?.close();
  await f?.stop();
});

it('when the posts service is killed (SIGKILL) after a publish was answered and before its event was sent, then the service started again sends it, once', async () => {
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

  const published = await http.put(`/api/posts/${draft.body._id}`).set(auth).send({ status: 'published' });
  expect(published.status).toBe(200);
  const posts = f.system.processes.posts.child;
  process.kill(posts.pid, 'SIGKILL');
  await posts.exited;
  const killedAt = Date.now();
  // Nothing sent it: the process that wrote it is gone, and nothing else polls that outbox.
  await sleep(1_500);
  const beforeRestart = reader.events.length;

  Object.assign(postsEnv, REPLACEMENT);
  await f.system.start('posts');
  const restartedAt = Date.now();
  const deliveredAfterMs = await until(async () => reader?.events.length === 1, 10_000, 20);
  // One event, not two: a later poll finds nothing left to send.
  await sleep(1_500);

  recordFigures('event-delivery', {
    what: 'posts SIGKILLed after a publish was answered and before its event was sent; started again',
    eventsBeforeRestart: beforeRestart,
    restartMs: restartedAt - killedAt,
    deliveredAfterRestartMs: deliveredAfterMs,
  });
  expect(beforeRestart).toBe(0);
  expect(deliveredAfterMs).toBeDefined();
  expect(reader.events).toHaveLength(1);
  expect(reader.events[0]).toMatchObject({ event: 'posts.upsert', data: published.body });
  // The post itself was committed before the kill, as the answer said.
  expect((await http.get(`/api/posts/${draft.body._id}`)).body).toEqual(published.body);
});
