import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningSystem } from '@cs/devstack';
import { api, startTestSystem } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

let system: RunningSystem;
let http: ReturnType<typeof api>;

beforeAll(async () => {
  // One process each: a service's own port, and a service that is down, are this suite's subject.
  system = await startTestSystem({ oneProcess: false, env: { AUTH_RATE_LIMIT: '0' } });
  http = api(system.gatewayUrl);
}, 60_000);
afterAll(async () => {
  await system?.stop();
});

async function register(): Promise<string> {
  const email = `gw-${Date.now()}-${Math.random().toString(16).slice(2)}@example.com`;
  const res = await http.post('/api/auth/register').send({ email, password: 'password-123' });
  expect(res.status).toBe(201);
  return res.body.token as string;
}

describe('the gateway, in front of the real services', () => {
  it('when every service is up, then /readyz is 200 and names them', async () => {
    const res = await http.get('/readyz');

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'ready',
      services: { identity: true, posts: true, notes: true, files: true, realtime: true },
    });
  });

  it('when a client uses each route family, then it reaches the owning service', async () => {
    const token = await register();
    const auth = { Authorization: `Bearer ${token}` };

    const post = await http
      .post('/api/posts')
      .set(auth)
      .send({ title: 'Via gateway', body: 'Through the front door.' });
    expect(post.status).toBe(201);
    expect((await http.get(`/api/posts/${post.body._id}`).set(auth)).body.title).toBe('Via gateway');
    expect((await http.get('/api/posts/my-posts').set(auth)).body).toHaveLength(1);
    expect((await http.get('/api/posts')).status).toBe(200);

    const note = await http.post('/api/notes').set(auth).send({ title: 'Via gateway' });
    expect(note.status).toBe(201);
    expect((await http.get('/api/notes').set(auth)).body).toHaveLength(1);
    for (const path of [`/notes/${note.body._id}/attachment`, `/api/notes/${note.body._id}/attachment`]) {
      const res = await http.get(path).set(auth);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Note has no attachment' });
    }

    for (const path of ['/upload-url', '/api/upload-url']) {
      const res = await http.post(path).set(auth).send({ contentType: 'text/plain', filename: 'a.txt', size: 1 });
      expect(res.status).toBe(200);
      expect(res.body.key).toMatch(/^uploads\/[0-9a-f-]{36}\.txt$/);
    }
    for (const path of ['/multipart-uploads', '/api/multipart-uploads']) {
      const body = { contentType: 'application/zip', filename: 'a.zip', size: 6 * 1024 * 1024 };
      expect((await http.post(path).send(body)).status).toBe(401);
      const created = await http.post(path).set(auth).send(body);
      expect(created.status).toBe(201);
      const upload = await http.get(`${path}/${created.body.uploadId}`).set(auth);
      expect(upload.body).toMatchObject({ key: created.body.key, parts: [] });
      await http.delete(`${path}/${created.body.uploadId}`).set(auth).expect(204);
    }
  });

  it('when a client asks for an internal route or an unknown path, then 404 JSON from the gateway', async () => {
    const token = await register();
    for (const path of ['/internal/uploads/claim', '/api/internal/uploads/claim', '/nothing', '/api', '/api/postsX']) {
      const res = await http.post(path).set('Authorization', `Bearer ${token}`).send({ key: 'x' });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Not found' });
    }
  });

  it('when a response comes back, then it carries a request id; a safe one sent by the client is kept', async () => {
    const generated = await http.get('/api/posts');
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);

    const kept = await http.get('/api/posts').set('x-request-id', 'client-chosen-42');
    expect(kept.headers['x-request-id']).toBe('client-chosen-42');
  });

  it('when a service is called from another address of this machine, then the connection is refused; only the gateway is bound to every interface', async () => {
    const outside = Object.values(networkInterfaces())
      .flat()
      .find((i) => i?.family === 'IPv4' && !i.internal)?.address;
    // A machine with no other interface could not be reached from outside at all.
    expect(outside).toBeDefined();
    const reach = (host: string, port: number) =>
      new Promise<string>((resolve) => {
        const socket = connect({ host, port });
        socket.once('connect', () => {
          socket.destroy();
          resolve('connected');
        });
        socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
      });
    for (const name of ['identity', 'posts', 'notes', 'files'] as const) {
      const { port } = system.processes[name];
      expect({ name, outside: await reach(outside as string, port) }).toEqual({ name, outside: 'ECONNREFUSED' });
      expect({ name, loopback: await reach('127.0.0.1', port) }).toEqual({ name, loopback: 'connected' });
    }
    expect(await reach(outside as string, system.processes.gateway.port)).toBe('connected');
  });

  it('when a service is down, then its routes answer 502 JSON, the others keep working, and it is used again once back', async () => {
    const token = await register();
    await system.processes.posts.child.stop();
    try {
      const down = await http.get('/api/posts');
      expect(down.status).toBe(502);
      expect(down.body).toEqual({ error: 'Upstream service unavailable' });
      // Readiness is shared among callers and may be up to a second old (see readiness.ts).
      const notReadyBy = Date.now() + 2500;
      while ((await http.get('/readyz')).status !== 503 && Date.now() < notReadyBy) await sleep(100);
      expect((await http.get('/readyz')).status).toBe(503);

      // A protected route is still refused before any hop, with the contract's 401.
      const anonymous = await http.post('/api/posts').send({ title: 't', body: 'bbbbbbbbbbbb' });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual({ error: 'No token provided' });

      expect((await http.get('/api/notes').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    } finally {
      await system.start('posts');
    }
    const back = await http.get('/api/posts');
    expect(back.status).toBe(200);
  });
});
