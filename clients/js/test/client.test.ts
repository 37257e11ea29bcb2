/**
 * The client library in Node, against the whole real system (gateway, services, MongoDB-protocol
 * server and S3 storage): sessions, typed calls, every kind of error, and uploads.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, prepareBucket, type RunningSystem } from '@cs/devstack';
import { ObjectStorage } from '@cs/storage';
import { eventually, newUserId, startTestSystem, TEST_JWT_SECRET, testStorageSettings } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import jwt from 'jsonwebtoken';
import sharp from 'sharp';
import {
  ApiError,
  createContentClient,
  memoryStore,
  NetworkError,
  SessionExpiredError,
  StorageError,
  UploadAbortedError,
} from '../src/index.js';

const MiB = 1024 * 1024;
const id = randomBytes(3).toString('hex');
const storageSettings = { ...testStorageSettings(), bucket: `client-js-${id}` };
const storage = new ObjectStorage(storageSettings);
let system: RunningSystem;
let base: string;

beforeAll(async () => {
  await prepareBucket({ ...storageSettings, corsOrigins: [] });
  system = await startTestSystem({ storage: storageSettings, env: { AUTH_RATE_LIMIT: '0' } });
  base = system.gatewayUrl;
}, 60_000);

afterAll(async () => {
  await system?.stop();
  storage.destroy();
});

const email = (label: string) => `${label}-${id}-${randomBytes(3).toString('hex')}@example.com`;

async function signedIn(label: string) {
  const client = createContentClient({ baseUrl: base });
  await client.register(email(label), 'correct horse battery');
  return client;
}

/** What an error is, as data, so a failed expectation shows all of it. */
const shape = (error: unknown) => {
  const e = error as ApiError & { kind: string };
  return { kind: e.kind, name: e.name, status: e.status, message: e.message, errors: e.errors };
};

describe('sessions and typed calls', () => {
  it('when posts are listed with an author and a sort, then only that author’s published posts come back, in that order', async () => {
    const client = await signedIn('author');
    const posts = [];
    for (const title of ['banana', 'Apple', 'cherry']) {
      const post = await client.posts.create({ title, body: 'Written through the client.' });
      posts.push(await client.posts.update(post._id, { status: 'published' }));
    }
    await client.posts.create({ title: 'a draft', body: 'Never listed for anyone.' });
    const author = posts[0]?.authorId as string;

    const byTitle = await client.posts.list({ author, sort: 'title' });
    const oldest = await client.posts.list({ author, sort: 'oldest', limit: 2, page: 2 });

    expect(byTitle.posts.map((p) => p.title)).toEqual(['Apple', 'banana', 'cherry']);
    expect(byTitle.total).toBe(3);
    expect(oldest.posts.map((p) => p.title)).toEqual(['cherry']);
  });

  it('register keeps the session, every protected call sends it, and logout forgets it', async () => {
    const store = memoryStore();
    const client = createContentClient({ baseUrl: base, store });
    const address = email('session');
    const session = await client.register(address, 'correct horse battery');
    expect(session.email).toBe(address);
    expect(store.load()).toEqual(session);

    const post = await client.posts.create({ title: 'Typed', body: 'Written through the client.', tags: ['typed'] });
    expect(post).toMatchObject({ title: 'Typed', status: 'draft', tags: ['typed'] });
    const published = await client.posts.update(post._id, { status: 'published' });
    expect(published.publishedAt).toEqual(expect.any(String));
    expect((await client.posts.list({ tag: 'typed' })).posts.map((p) => p._id)).toContain(post._id);
    expect((await client.posts.mine()).items.map((p) => p._id)).toEqual([post._id]);

    await client.logout();
    expect(client.session()).toBeUndefined();
    await expect(client.posts.mine()).rejects.toMatchObject({ kind: 'api', status: 401 });
    await client.login(address, 'correct horse battery');
    expect((await client.posts.mine()).items).toHaveLength(1);
  });

  it('notes come a page at a time, with the cursor of the next page', async () => {
    const client = await signedIn('pages');
    for (const title of ['one', 'two', 'three']) await client.notes.create({ title });
    const first = await client.notes.list({ limit: 2 });
    expect(first.items.map((n) => n.title)).toEqual(['three', 'two']);
    const second = await client.notes.list({ limit: 2, cursor: first.next ?? '' });
    expect(second).toEqual({ items: [expect.objectContaining({ title: 'one' })] });
  });

  it('when a post’s title and tags are patched, then one PATCH changes both; when a tag breaks the rule, then an ApiError 400 and neither changes', async () => {
    const sent: string[] = [];
    const client = createContentClient({
      baseUrl: base,
      fetch: (input, init) => {
        const request = new Request(input, init);
        sent.push(`${request.method} ${new URL(request.url).pathname}`);
        return fetch(request);
      },
    });
    await client.register(email('patch'), 'correct horse battery');
    const post = await client.posts.create({ title: 'Before', body: 'Written through the client.', tags: ['old'] });

    sent.length = 0;
    const patched = await client.posts.patch(post._id, { title: 'After', tags: ['New', 'walks'] });
    expect(sent).toEqual([`PATCH /api/posts/${post._id}`]);
    expect(patched).toMatchObject({ _id: post._id, title: 'After', tags: ['new', 'walks'] });

    const error = await client.posts.patch(post._id, { title: 'Not applied', tags: ['two words'] }).catch((e) => e);
    expect(shape(error)).toMatchObject({ kind: 'api', name: 'ApiError', status: 400 });
    expect((error as ApiError).errors).toEqual([{ field: 'tags', message: expect.stringMatching(/^tags must be/) }]);
    expect(await client.posts.get(post._id)).toMatchObject({ title: 'After', tags: ['new', 'walks'] });
  });

  it('with the cache on, a public read sends its ETag again and a 304 gives back the same body', async () => {
    const author = await signedIn('cache');
    const post = await author.posts.create({ title: 'Cached', body: 'Read twice, sent once.' });
    await author.posts.update(post._id, { status: 'published' });
    const statuses: number[] = [];
    const reader = createContentClient({
      baseUrl: base,
      cache: true,
      fetch: async (request) => {
        const response = await fetch(request);
        statuses.push(response.status);
        return response;
      },
    });

    const first = await reader.posts.get(post._id);
    const second = await reader.posts.get(post._id);
    expect(statuses).toEqual([200, 304]);
    expect(second).toEqual(first);
  });
});

describe('errors: one type per kind, never raw JSON', () => {
  it('a body the validation step refuses is an ApiError with the field errors and the request id', async () => {
    const client = await signedIn('invalid');
    const error = await client.posts.create({ title: '', body: 'short' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(shape(error)).toMatchObject({ kind: 'api', status: 400 });
    expect((error as ApiError).errors.map((e) => e.field).sort()).toEqual(['body', 'title']);
    expect((error as ApiError).requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('an unknown post is an ApiError 404 with the API’s message', async () => {
    const client = createContentClient({ baseUrl: base });
    const error = await client.posts.get('0123456789abcdef01234567').catch((e: unknown) => e);
    expect(shape(error)).toMatchObject({ kind: 'api', name: 'ApiError', status: 404, message: 'Post not found' });
  });

  it('an unreachable API is a NetworkError', async () => {
    const client = createContentClient({ baseUrl: `http://127.0.0.1:${await freePort()}` });
    const error = await client.posts.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(shape(error)).toMatchObject({ kind: 'network' });
    expect((error as NetworkError).target).toBe('api');
  });

  it('a token the API refuses ends the session: SessionExpiredError, the store cleared, the handler called once', async () => {
    const store = memoryStore();
    const expired: SessionExpiredError[] = [];
    const client = createContentClient({ baseUrl: base, store, onSessionExpired: (e) => expired.push(e) });
    const token = jwt.sign({ id: newUserId(), exp: Math.floor(Date.now() / 1000) - 60 }, TEST_JWT_SECRET, {
      algorithm: 'HS256',
    });
    store.save({ token, email: 'gone@example.com' });

    const error = await client.notes.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionExpiredError);
    expect(shape(error)).toMatchObject({ kind: 'session-expired', status: 401 });
    expect(store.load()).toBeUndefined();
    expect(expired).toEqual([error]);
  });

  it('a wrong password is an ApiError 401 and no session ends (none was sent)', async () => {
    const client = createContentClient({ baseUrl: base });
    const address = email('wrong');
    await client.register(address, 'correct horse battery');
    await client.logout();
    const error = await client.login(address, 'not the password').catch((e: unknown) => e);
    expect(shape(error)).toMatchObject({ kind: 'api', name: 'ApiError', status: 401, message: 'Invalid credentials' });
  });
});

describe('sessions that last: refresh, single-flight, and logout that ends them', () => {
  /** A client whose every request is counted by path, and the store it keeps its session in. */
  function counted() {
    const store = memoryStore();
    const sent: string[] = [];
    const client = createContentClient({
      baseUrl: base,
      store,
      fetch: ((request: Request) => {
        sent.push(new URL(request.url).pathname);
        return fetch(request);
      }) as typeof fetch,
    });
    const refreshes = () => sent.filter((p) => p === '/api/auth/refresh').length;
    return { client, store, refreshes };
  }

  it('when 20 calls are made as the access token expires, then one refresh is sent and every call succeeds on the new token', async () => {
    const { client, store, refreshes } = counted();
    const session = await client.register(email('expiring'), 'correct horse battery');
    store.save({ ...session, expiresAt: Date.now() - 1 });

    const pages = await Promise.all(Array.from({ length: 20 }, () => client.notes.list()));

    expect(pages).toHaveLength(20);
    expect(refreshes()).toBe(1);
    // (The access token may be the very same bytes: same user, same second.)
    expect(store.load()?.refreshToken).not.toBe(session.refreshToken);
    expect(store.load()?.expiresAt).toBeGreaterThan(Date.now());
  });

  it('when the API refuses 20 calls’ access token, then one refresh is sent and every call is sent again and succeeds', async () => {
    const { client, store, refreshes } = counted();
    const session = await client.register(email('refused'), 'correct horse battery');
    const userId = (jwt.decode(session.token) as { id: string }).id;
    const stale = jwt.sign({ id: userId, exp: Math.floor(Date.now() / 1000) - 60 }, TEST_JWT_SECRET, {
      algorithm: 'HS256',
    });
    // The client believes the token good: only the API's 401 can tell it otherwise.
    store.save({ ...session, token: stale });

    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) => client.notes.create({ title: `Sent again ${i}` })),
    );

    expect(created.map((n) => n.title).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `Sent again ${i}`).sort());
    expect(refreshes()).toBe(1);
  });

  it('when two clients share one store, as two tabs share localStorage, then both refresh at once and neither logs the other out', async () => {
    const store = memoryStore();
    const tabA = createContentClient({ baseUrl: base, store });
    const tabB = createContentClient({ baseUrl: base, store });
    const session = await tabA.register(email('tabs'), 'correct horse battery');
    store.save({ ...session, expiresAt: Date.now() - 1 });

    await Promise.all([tabA.notes.list(), tabB.notes.list()]);
    store.save({ ...(store.load() ?? session), expiresAt: Date.now() - 1 });
    await Promise.all([tabB.notes.list(), tabA.notes.list()]);

    expect(store.load()?.refreshToken).toEqual(expect.any(String));
  });

  it('when the session was ended elsewhere, then a call that needs a refresh fails with SessionExpiredError and the store is cleared', async () => {
    const { client, store } = counted();
    const session = await client.register(email('ended'), 'correct horse battery');
    await client.sessions.endAll();
    store.save({ ...session, expiresAt: Date.now() - 1 });

    const error = await client.notes.list().catch((e: unknown) => e);

    expect(error).toBeInstanceOf(SessionExpiredError);
    expect(store.load()).toBeUndefined();
    // And a call whose access token the API refuses, with the session ended: the same.
    const stale = jwt.sign({ id: newUserId(), exp: Math.floor(Date.now() / 1000) - 60 }, TEST_JWT_SECRET, {
      algorithm: 'HS256',
    });
    store.save({ ...session, token: stale, expiresAt: Date.now() + 3_600_000 });
    expect(await client.notes.list().catch((e: unknown) => e)).toBeInstanceOf(SessionExpiredError);
    expect(store.load()).toBeUndefined();
  });

  it('when the client logs out, then the session ends on the server: its refresh token is refused, and its access token too', async () => {
    const { client, store } = counted();
    const session = await client.register(email('logout'), 'correct horse battery');

    await client.logout();

    expect(store.load()).toBeUndefined();
    const again = await fetch(`${base}/api/auth/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refreshToken: session.refreshToken }),
    });
    expect(again.status).toBe(401);
    await eventually(
      'the access token refused after logout',
      async () =>
        (await fetch(`${base}/api/auth/me`, { headers: { authorization: `Bearer ${session.token}` } })).status,
      (status) => status === 401,
    );
  });

  it('when the client lists its sessions and ends one, then that one is gone from the list', async () => {
    const address = email('devices');
    const phone = createContentClient({ baseUrl: base });
    await phone.register(address, 'correct horse battery');
    const laptop = createContentClient({ baseUrl: base });
    await laptop.login(address, 'correct horse battery');

    const before = await laptop.sessions.list();
    await laptop.sessions.end(before[1]?.id ?? '');

    expect(before).toHaveLength(2);
    expect((await laptop.sessions.list()).map((s) => s.id)).toEqual([before[0]?.id]);
    expect((await laptop.account.me()).email).toBe(address);
  });
});

describe('the account', () => {
  it('changing the password keeps the session going on the fresh token; a wrong current password ends nothing', async () => {
    const store = memoryStore();
    const expired: unknown[] = [];
    const client = createContentClient({ baseUrl: base, store, onSessionExpired: (e) => expired.push(e) });
    const address = email('account');
    const first = await client.register(address, 'correct horse battery');

    const wrong = await client.account.changePassword('not the password', 'a brand new secret').catch((e) => e);
    expect(shape(wrong)).toMatchObject({ kind: 'api', status: 401, message: 'Invalid credentials' });
    expect(store.load()).toEqual(first);

    await client.account.changePassword('correct horse battery', 'a brand new secret');
    expect(store.load()?.email).toBe(address);
    // A fresh token of the same person (within the same second it is the same text: same claims).
    expect((jwt.decode(store.load()?.token ?? '') as { id: string }).id).toBe(
      (jwt.decode(first.token) as { id: string }).id,
    );
    expect(await client.posts.mine()).toEqual({ items: [] });
    expect(expired).toEqual([]);
    await expect(createContentClient({ baseUrl: base }).login(address, 'a brand new secret')).resolves.toMatchObject({
      email: address,
    });
  });

  it('deleting the account ends the session; the same token then writes nothing (SessionExpiredError)', async () => {
    const client = await signedIn('delete');
    const token = client.session()?.token ?? '';
    await client.account.remove('correct horse battery');
    expect(client.session()).toBeUndefined();

    const store = memoryStore();
    store.save({ token, email: 'deleted@example.com' });
    const again = createContentClient({ baseUrl: base, store });
    // Posts learns of the deletion just after the answer (whatever lands before is deleted with it).
    let refused: unknown;
    for (let i = 0; i < 50 && !refused; i++) {
      refused = await again.posts.create({ title: 't', body: 'ten or more characters' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      if (!refused) await sleep(100);
    }
    expect(refused).toBeInstanceOf(SessionExpiredError);
    expect(store.load()).toBeUndefined();
  });

  it('a reset is asked for with one call, and a token that is not one is an ApiError 400', async () => {
    const client = createContentClient({ baseUrl: base });
    await expect(client.account.requestPasswordReset(email('reset'))).resolves.toBeUndefined();
    const bad = await client.account.confirmPasswordReset('not-a-token', 'a brand new secret').catch((e) => e);
    expect(shape(bad)).toMatchObject({ kind: 'api', status: 400, message: 'Invalid or expired reset token' });
  });
});

describe('uploads straight to storage', () => {
  async function download(client: Awaited<ReturnType<typeof signedIn>>, key: string): Promise<Buffer> {
    const note = await client.notes.create({ title: 'with a file', attachmentKey: key });
    const { url } = await client.notes.downloadLink(note._id);
    return Buffer.from(await (await fetch(url)).arrayBuffer());
  }

  it('an image attached to a note gives a link to its thumbnail with thumb, and to the original without', async () => {
    const client = await signedIn('thumbnail');
    const image = await sharp({ create: { width: 320, height: 200, channels: 3, background: '#4060a0' } })
      .png()
      .toBuffer();
    const key = await client.upload(new Blob([image], { type: 'image/png' }), { filename: 'picture.png' });
    const note = await client.notes.create({ title: 'with a picture', attachmentKey: key });

    const thumb = await client.notes.downloadLink(note._id, { thumb: '100x100' });
    const meta = await sharp(Buffer.from(await (await fetch(thumb.url)).arrayBuffer())).metadata();
    expect({ width: meta.width, height: meta.height, format: meta.format }).toEqual({
      width: 100,
      height: 100,
      format: 'png',
    });
    const original = await client.notes.downloadLink(note._id);
    expect(Buffer.from(await (await fetch(original.url)).arrayBuffer()).equals(image)).toBe(true);
  });

  it('a small file goes in one PUT: progress rises to its size, and the download is the same bytes', async () => {
    const client = await signedIn('one-put');
    const bytes = randomBytes(300 * 1024);
    const seen: [number, number][] = [];
    const key = await client.upload(new Blob([bytes], { type: 'text/plain' }), {
      filename: 'notes.txt',
      onProgress: (sent, total) => seen.push([sent, total]),
    });

    expect(key).toMatch(/^uploads\/[0-9a-f-]{36}\.txt$/);
    expect(seen.at(-1)).toEqual([bytes.length, bytes.length]);
    expect(seen.every(([sent], i) => i === 0 || sent >= (seen[i - 1]?.[0] ?? 0))).toBe(true);
    expect((await download(client, key)).equals(bytes)).toBe(true);
  });

  it('a large file goes in parts: progress counts every part up to its size, and the download is the same bytes', async () => {
    const client = await signedIn('parts');
    const bytes = randomBytes(20 * MiB + 123);
    const seen: number[] = [];
    const key = await client.upload(new Blob([bytes], { type: 'application/zip' }), {
      filename: 'data.zip',
      multipartFrom: 5 * MiB,
      onProgress: (sent) => seen.push(sent),
    });

    // Parts of 8, 8 and 4 MiB + 123 bytes; in Node each counts when it is stored, in any order.
    // So every figure is the sum of some of the parts, rising from 0 to the whole file.
    const parts = [8 * MiB, 8 * MiB, 4 * MiB + 123];
    const sums = new Set(
      [0, 1, 2, 3, 4, 5, 6, 7].map((mask) => parts.reduce((sum, part, i) => (mask & (1 << i) ? sum + part : sum), 0)),
    );
    expect(seen[0]).toBe(0);
    expect(seen.at(-1)).toBe(bytes.length);
    expect(seen.filter((sent) => !sums.has(sent))).toEqual([]);
    expect(seen.every((sent, i) => i === 0 || sent > (seen[i - 1] ?? 0))).toBe(true);
    expect((await download(client, key)).equals(bytes)).toBe(true);
    expect(await storage.listMultipartUploads('uploads/')).toEqual([]);
  });

  it('an aborted upload rejects with UploadAbortedError, and storage keeps none of its parts', async () => {
    const client = await signedIn('abort');
    const bytes = randomBytes(24 * MiB);
    const controller = new AbortController();
    const upload = client.upload(new Blob([bytes], { type: 'application/zip' }), {
      filename: 'big.zip',
      multipartFrom: 5 * MiB,
      concurrency: 1,
      signal: controller.signal,
      // Aborted once the first part is in storage.
      onProgress: (sent) => sent > 0 && controller.abort(),
    });

    await expect(upload).rejects.toBeInstanceOf(UploadAbortedError);
    expect(await storage.listMultipartUploads('uploads/')).toEqual([]);
    await expect(client.upload(new Blob(['x']), { signal: controller.signal })).rejects.toMatchObject({
      kind: 'aborted',
    });
  });

  it('a file over the limit is refused by the API before anything is sent: an ApiError 400', async () => {
    const client = await signedIn('too-big');
    const error = await client
      .upload(new Blob([new Uint8Array(26 * MiB)], { type: 'text/plain' }), { multipartFrom: 64 * MiB })
      .catch((e: unknown) => e);
    expect(shape(error)).toMatchObject({ kind: 'api', status: 400 });
  });
});

describe('a system whose links storage refuses, and whose auth limit is 3 a minute', () => {
  let elsewhere: RunningSystem;
  beforeAll(async () => {
    // Links signed for a path of storage's address where no bucket is: storage refuses them.
    elsewhere = await startTestSystem({
      storage: storageSettings,
      env: { AUTH_RATE_LIMIT: '3' },
      processEnv: { files: { S3_PUBLIC_ENDPOINT: `${storageSettings.endpoint}/not-here` } },
    });
  }, 60_000);
  afterAll(async () => {
    await elsewhere?.stop();
  });

  it('a refused link is a StorageError with storage’s status, told apart from API errors', async () => {
    const client = createContentClient({ baseUrl: elsewhere.gatewayUrl });
    await client.register(email('refused'), 'correct horse battery');
    const error = await client.upload(new Blob(['refused'], { type: 'text/plain' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageError);
    expect(shape(error)).toMatchObject({ kind: 'storage', status: expect.any(Number) });
    expect((error as StorageError).status).toBeGreaterThanOrEqual(400);
  });

  it('over the rate limit is an ApiError 429 with the seconds to wait', async () => {
    const client = createContentClient({ baseUrl: elsewhere.gatewayUrl });
    let error: unknown;
    for (let i = 0; i < 5 && !error; i++) {
      error = await client.login(email('limited'), 'correct horse battery').then(
        () => undefined,
        (e: unknown) => ((e as ApiError).status === 429 ? e : undefined),
      );
    }
    expect(shape(error)).toMatchObject({ kind: 'api', name: 'ApiError', status: 429 });
    expect((error as ApiError).retryAfter).toBeGreaterThan(0);
  });
});
