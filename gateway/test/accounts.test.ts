/**
 * The account routes through the gateway, on the real services: deleting an account removes what
 * it owns in posts, notes and files (and storage), and nothing of anyone else's; its token, still
 * valid, can write nothing afterwards. The fault test (tests/faults/account-deletion.test.ts)
 * does the same with an owner stopped.
 */
import { readFileSync } from 'node:fs';
import type { RunningSystem } from '@cs/devstack';
import { ObjectStorage } from '@cs/storage';
import {
  api,
  eventually,
  type PopulatedAccount,
  populateAccount,
  startTestSystem,
  testStorageSettings,
} from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

let system: RunningSystem;
let http: ReturnType<typeof api>;
const storage = new ObjectStorage(testStorageSettings());

beforeAll(async () => {
  system = await startTestSystem({ env: { AUTH_RATE_LIMIT: '0', DELETION_OUTBOX_INTERVAL: '500ms' } });
  http = api(system.gatewayUrl);
}, 60_000);
afterAll(async () => {
  storage.destroy();
  await system?.stop();
});

const bearer = (a: PopulatedAccount) => ({ Authorization: `Bearer ${a.token}` });

/** What an account can see of its own data, and what storage holds of it. */
async function holdings(a: PopulatedAccount) {
  const [mine, notes, ...posts] = await Promise.all([
    http.get('/api/posts/my-posts').set(bearer(a)),
    http.get('/api/notes').set(bearer(a)),
    ...a.postIds.map((id) => http.get(`/api/posts/${id}`).set(bearer(a))),
  ]);
  const objects = await Promise.all(a.keys.map((key) => storage.headObject(key)));
  const uploads = await storage.listMultipartUploads('uploads/');
  return {
    myPosts: mine.body.length as number,
    notes: notes.body.length as number,
    postsFound: posts.filter((r) => r.status === 200).length,
    objects: objects.filter(Boolean).length,
    multipart: uploads.filter((u) => a.keys.includes(u.key)).length,
  };
}

/** A deletion reaches posts, notes and files through an outbox, after the response; time for it on a loaded machine. */
const DELETION = { timeoutMs: 15_000 };

describe('DELETE /api/auth/account through the gateway', () => {
  it('when an account is deleted, then its posts, notes, objects and uploads go everywhere, and no one else’s', async () => {
    const [victim, bystander] = await Promise.all([
      populateAccount(system.gatewayUrl, 'victim'),
      populateAccount(system.gatewayUrl, 'bystander'),
    ]);
    const everything = { myPosts: 2, notes: 2, postsFound: 2, objects: 1, multipart: 1 };
    expect(await holdings(victim)).toEqual(everything);
    expect(await holdings(bystander)).toEqual(everything);

    const res = await http.delete('/api/auth/account').set(bearer(victim)).send({ password: victim.password });
    expect(res.status).toBe(204);

    // The published post was public: once posts has the event, nobody sees it.
    await eventually(
      'the published post gone',
      async () => (await http.get(`/api/posts/${victim.postIds[1]}`)).status,
      (status) => status === 404,
      DELETION,
    );
    await eventually(
      'the object removed from storage',
      () => storage.headObject(victim.keys[0] ?? ''),
      (head) => head === undefined,
      DELETION,
    );
    await eventually(
      'the open multipart upload aborted',
      () => storage.listMultipartUploads('uploads/'),
      (uploads) => uploads.every((u) => u.key !== victim.keys[1]),
      DELETION,
    );
    expect(await holdings(bystander)).toEqual(everything);
    const login = await http.post('/api/auth/login').send({ email: victim.email, password: victim.password });
    expect(login.status).toBe(401);
  });

  it('when the deleted account’s token is used after the deletion, then every write is refused with 401 and changes nothing, and reads refuse it too once revoked', async () => {
    const victim = await populateAccount(system.gatewayUrl, 'stale');
    const bystander = await populateAccount(system.gatewayUrl, 'other');
    await http.delete('/api/auth/account').set(bearer(victim)).send({ password: victim.password }).expect(204);
    await eventually(
      'the published post gone',
      async () => (await http.get(`/api/posts/${victim.postIds[1]}`)).status,
      (status) => status === 404,
      DELETION,
    );
    await eventually(
      'the object removed from storage',
      () => storage.headObject(victim.keys[0] ?? ''),
      (head) => head === undefined,
      DELETION,
    );

    const writes = await Promise.all([
      http.post('/api/posts').set(bearer(victim)).send({ title: 'after', body: 'written after the deletion' }),
      http.post('/api/notes').set(bearer(victim)).send({ title: 'after' }),
      http.post('/api/upload-url').set(bearer(victim)).send({ contentType: 'text/plain', filename: 'a.txt', size: 1 }),
      http
        .post('/api/multipart-uploads')
        .set(bearer(victim))
        .send({ contentType: 'application/zip', filename: 'a.zip', size: 1 }),
      http.put(`/api/posts/${bystander.postIds[1]}`).set(bearer(victim)).send({ title: 'not mine' }),
      http
        .put('/api/auth/password')
        .set(bearer(victim))
        .send({ currentPassword: victim.password, newPassword: 'x'.repeat(9) }),
    ]);

    for (const write of writes) {
      expect({ status: write.status, body: write.body }).toEqual({
        status: 401,
        body: { error: 'Invalid or expired token' },
      });
    }
    expect((await http.get(`/api/posts/${bystander.postIds[1]}`)).body.title).not.toBe('not mine');
    // The deletion revoked every token of the account: reads refuse it too, within the bound.
    await eventually(
      'the deleted account’s token refused on reads',
      async () =>
        (
          await Promise.all([
            http.get('/api/posts/my-posts').set(bearer(victim)),
            http.get('/api/notes').set(bearer(victim)),
            http.get(`/api/posts/${bystander.postIds[1]}`).set(bearer(victim)),
          ])
        ).map((r) => r.status),
      (statuses) => statuses.every((status) => status === 401),
    );
  });
});

describe('the other account routes through the gateway', () => {
  it('when a password is changed or an account deleted without a token, then the gateway answers 401 itself', async () => {
    for (const [method, path] of [
      ['put', '/api/auth/password'],
      ['delete', '/api/auth/account'],
    ] as const) {
      const res = await http[method](path).send({ password: 'whatever' });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'No token provided' });
    }
  });

  it('when a password reset is asked for, then the gateway passes it on, without a token, and applies the auth rate limit', async () => {
    const limited = await startTestSystem({ env: { AUTH_RATE_LIMIT: '2' } });
    try {
      const gateway = api(limited.gatewayUrl);
      const statuses = [];
      for (let i = 0; i < 3; i++) {
        statuses.push((await gateway.post('/api/auth/password-reset').send({ email: `ip-${i}@example.com` })).status);
      }
      expect(statuses).toEqual([202, 202, 429]);
    } finally {
      await limited.stop();
    }
  });

  it('when identity runs without SMTP, then reset is 503 {error}, and its boot log said so once', async () => {
    const mute = await startTestSystem({ smtpUrl: undefined, env: { AUTH_RATE_LIMIT: '0' } });
    try {
      const res = await api(mute.gatewayUrl).post('/api/auth/password-reset').send({ email: 'someone@example.com' });
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ error: 'Password reset by e-mail is not available' });
      const log = readFileSync(mute.processes.identity.logFile, 'utf8');
      expect(log.match(/SMTP_URL is not set/g)).toHaveLength(1);
    } finally {
      await mute.stop();
    }
  });
});
