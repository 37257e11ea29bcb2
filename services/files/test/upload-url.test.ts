import { setTimeout as sleep } from 'node:timers/promises';
import { refusal, TEST_FRONTEND_ORIGIN } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { extensionOf } from '../src/uploads/upload-key';
import { type FilesHarness, newCaller, startFiles } from './helpers';

const KEY = /^uploads\/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.([a-z0-9]{1,16})$/;
let h: FilesHarness;
const caller = newCaller();

beforeAll(async () => {
  h = await startFiles(__filename);
});
afterAll(async () => {
  await h.close();
});

describe('POST /upload-url', () => {
  it('when contentType, filename and size are valid, then 200 with a link, the key, the headers to send and the lifetime', async () => {
    const res = await h.http
      .post('/upload-url')
      .set(caller.auth)
      .send({ contentType: 'image/png', filename: 'Holiday Photo.PNG', size: 2048 });

    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['expiresIn', 'headers', 'key', 'url']);
    expect(res.body.key).toMatch(KEY);
    expect(res.body.key.endsWith('.png')).toBe(true);
    expect(res.body.headers).toEqual({
      'Content-Type': 'image/png',
      'Content-Length': '2048',
      'If-None-Match': '*',
      'x-amz-meta-owner': caller.id,
      'x-amz-meta-size': '2048',
      'x-amz-meta-filename': 'Holiday%20Photo.PNG',
    });
    expect(res.body.expiresIn).toBe(300);
    const url = new URL(res.body.url);
    expect(url.pathname).toBe(`/${h.config.STORAGE_BUCKET}/${res.body.key}`);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('300');
    expect(url.searchParams.get('X-Amz-SignedHeaders')?.split(';')).toEqual(
      expect.arrayContaining([
        'content-type',
        'content-length',
        'if-none-match',
        'x-amz-meta-filename',
        'x-amz-meta-owner',
        'x-amz-meta-size',
      ]),
    );
  });

  it('when a key is issued, then nothing is written until the claim, which records the owner, content type, size and time', async () => {
    const before = await h.model.countDocuments({});
    const res = await h.http
      .post('/api/upload-url')
      .set(caller.auth)
      .send({ contentType: 'application/pdf', filename: 'a.pdf', size: 4 });
    expect(res.status).toBe(200);
    expect(await h.model.countDocuments({})).toBe(before);

    expect((await fetch(res.body.url, { method: 'PUT', headers: res.body.headers, body: '%PDF' })).status).toBe(200);
    expect(await h.bucket.headObject(res.body.key)).toMatchObject({ metadata: { owner: caller.id, size: '4' } });
    await h.http.post('/internal/uploads/claim').set(caller.auth).send({ key: res.body.key }).expect(200);
    const record = await h.model.findOne({ key: res.body.key }).lean();
    expect(record).toMatchObject({ ownerId: caller.id, contentType: 'application/pdf', size: 4, state: 'attached' });
    expect(Date.now() - (record?.issuedAt.getTime() ?? 0)).toBeLessThan(60_000);
  });

  it.each([
    ['../../etc/passwd', 'bin'],
    ['..\\..\\windows\\system32.dll', 'dll'],
    ['report', 'bin'],
    ['archive.tar.gz', 'gz'],
    ['trailing-dot.', 'bin'],
    ['.bashrc', 'bashrc'],
    ['photo.JPEG', 'jpeg'],
    ['weird.p%20g', 'bin'],
    ['emoji.😀', 'bin'],
    ['dir.name/file', 'bin'],
    ['x.abcdefghijklmnopq', 'bin'],
    ['x.abcdefghijklmnop', 'abcdefghijklmnop'],
    [`${'n'.repeat(996)}.txt`, 'txt'],
  ])(
    'when the filename is %j, then the key ends in .%s and carries nothing else of the name',
    async (filename, ext) => {
      expect(extensionOf(filename)).toBe(ext);
      const res = await h.http
        .post('/upload-url')
        .set(caller.auth)
        .send({ contentType: 'text/plain', filename, size: 1 });

      expect(res.status).toBe(200);
      expect(res.body.key).toMatch(KEY);
      expect(KEY.exec(res.body.key)?.[1]).toBe(ext);
    },
  );

  it.each([
    ['no contentType', { filename: 'a.txt' }],
    ['no filename', { contentType: 'text/plain' }],
    ['an empty filename', { contentType: 'text/plain', filename: '' }],
    ['an empty contentType', { contentType: ' ', filename: 'a.txt' }],
    ['a numeric filename', { contentType: 'text/plain', filename: 7 }],
    ['an operator contentType', { contentType: { $ne: null }, filename: 'a.txt' }],
  ])('when the body has %s, then 400 and no key is recorded', async (_case, body) => {
    const before = await h.model.countDocuments({ ownerId: caller.id });
    const res = await h.http.post('/upload-url').set(caller.auth).send(body);

    expect(res.status).toBe(400);
    expect(res.body).toEqual(refusal('contentType and filename are required strings'));
    expect(await h.model.countDocuments({ ownerId: caller.id })).toBe(before);
  });

  it.each(['text/html', 'application/x-msdownload', 'image/svg+xml', 'text/plain; charset=utf-8', 'nonsense'])(
    'when contentType is %j, which is not on the allowlist, then 400',
    async (contentType) => {
      const res = await h.http.post('/upload-url').set(caller.auth).send({ contentType, filename: 'a.txt' });

      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error:
          'contentType must be one of: image/png, image/jpeg, image/gif, image/webp, application/pdf, text/plain, application/json, application/zip',
        errors: [
          {
            field: 'contentType',
            message:
              'contentType must be one of: image/png, image/jpeg, image/gif, image/webp, application/pdf, text/plain, application/json, application/zip',
          },
        ],
      });
    },
  );

  it.each([0, -1, 1.5, '10', 25 * 1024 * 1024 + 1, null])('when size is %j, then 400', async (size) => {
    const res = await h.http
      .post('/upload-url')
      .set(caller.auth)
      .send({ contentType: 'text/plain', filename: 'a.txt', size });

    expect(res.status).toBe(400);
    expect(res.body).toEqual(refusal('size must be a positive integer no larger than the upload limit'));
  });

  it('when the filename is longer than 1024 characters, then 400', async () => {
    const res = await h.http
      .post('/upload-url')
      .set(caller.auth)
      .send({ contentType: 'text/plain', filename: `${'a'.repeat(1030)}.txt` });

    expect(res.status).toBe(400);
  });

  it('when there is no token, then 401', async () => {
    const res = await h.http.post('/upload-url').send({ contentType: 'text/plain', filename: 'a.txt' });

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'No token provided' });
  });
});

describe('the signed upload link, used against the real storage server', () => {
  async function link(body: Record<string, unknown>) {
    const res = await h.http
      .post('/upload-url')
      .set(caller.auth)
      .send({ filename: 'f.txt', contentType: 'text/plain', size: 13, ...body });
    expect(res.status).toBe(200);
    return res.body as { url: string; key: string; headers: Record<string, string> };
  }

  it('when the PUT carries the signed content type, then storage stores the object with it', async () => {
    const { url, key, headers } = await link({});
    const put = await fetch(url, { method: 'PUT', headers, body: 'hello storage' });

    expect(put.status).toBe(200);
    // (Fetch adds `Cache-Control: no-cache` to a conditional request, and storage keeps it: harmless, as
    // download links set their own.)
    expect(await h.bucket.headObject(key)).toMatchObject({ size: 13, contentType: 'text/plain' });
  });

  it('when the PUT carries another content type, then storage refuses it and stores nothing', async () => {
    const { url, key } = await link({});
    const put = await fetch(url, {
      method: 'PUT',
      headers: { 'Content-Type': 'text/html' },
      body: '<script>alert(1)</script>',
    });

    expect(put.status).toBe(403);
    expect(await put.text()).toContain('SignatureDoesNotMatch');
    expect(await h.bucket.headObject(key)).toBeUndefined();
  });

  it('when the body is larger or smaller than the declared size, then storage refuses it', async () => {
    const { url, key, headers } = await link({ size: 5 });
    const { 'Content-Length': _declared, ...rest } = headers;
    for (const body of ['six!!!', 'four', 'x'.repeat(40 * 1024)]) {
      const wrong = await fetch(url, { method: 'PUT', headers: rest, body });
      expect(wrong.status).toBe(403);
      expect(await h.bucket.headObject(key)).toBeUndefined();
    }
    const right = await fetch(url, { method: 'PUT', headers, body: 'five!' });
    expect(right.status).toBe(200);
  });

  it('when the PUT names another owner or size in its metadata, then storage refuses it', async () => {
    const { url, key, headers } = await link({});
    for (const change of [{ 'x-amz-meta-owner': newCaller().id }, { 'x-amz-meta-size': '12' }]) {
      const put = await fetch(url, { method: 'PUT', headers: { ...headers, ...change }, body: 'hello storage' });
      expect(put.status).toBe(403);
    }
    expect(await h.bucket.headObject(key)).toBeUndefined();
  });

  it('when the PUT leaves out If-None-Match, then storage refuses it: the link only creates', async () => {
    const { url, key, headers } = await link({});
    const { 'If-None-Match': _once, ...rest } = headers;
    const put = await fetch(url, { method: 'PUT', headers: rest, body: 'hello storage' });

    expect(put.status).toBe(403);
    expect(await h.bucket.headObject(key)).toBeUndefined();
  });

  it('when the link is used a second time, before or after the claim, then storage refuses it and the first object stays', async () => {
    const { url, key, headers } = await link({});
    expect((await fetch(url, { method: 'PUT', headers, body: 'first upload!' })).status).toBe(200);

    const again = await fetch(url, { method: 'PUT', headers, body: 'second one!!!' });
    expect(again.status).toBe(412);
    await h.http.post('/internal/uploads/claim').set(caller.auth).send({ key }).expect(200);
    const afterClaim = await fetch(url, { method: 'PUT', headers, body: 'replacement!!' });
    expect(afterClaim.status).toBe(412);
    expect((await h.bucket.getObject(key)).toString()).toBe('first upload!');
  });

  it('when the link has expired, then storage refuses the PUT', async () => {
    const short = await startFiles(__filename, { UPLOAD_URL_TTL_S: '1' }, h.db);
    try {
      const res = await short.http
        .post('/upload-url')
        .set(caller.auth)
        .send({ contentType: 'text/plain', filename: 'late.txt', size: 8 });
      expect(res.body.expiresIn).toBe(1);
      await sleep(2100);

      const put = await fetch(res.body.url, { method: 'PUT', headers: res.body.headers, body: 'too late' });
      expect(put.status).toBe(403);
      expect(await put.text()).toMatch(/expired/i);
      expect(await h.bucket.headObject(res.body.key)).toBeUndefined();
    } finally {
      await short.close();
    }
  });

  it('when a browser at FRONTEND_ORIGIN preflights the PUT, then the bucket allows it; another origin is refused', async () => {
    const { url } = await link({});
    const preflight = (origin: string) =>
      fetch(url, {
        method: 'OPTIONS',
        headers: {
          Origin: origin,
          'Access-Control-Request-Method': 'PUT',
          'Access-Control-Request-Headers': 'content-type,if-none-match,x-amz-meta-owner,x-amz-meta-size',
        },
      });

    const allowed = await preflight(TEST_FRONTEND_ORIGIN);
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(TEST_FRONTEND_ORIGIN);
    expect(allowed.headers.get('access-control-allow-methods')).toContain('PUT');
    for (const header of ['if-none-match', 'x-amz-meta-owner', 'x-amz-meta-size']) {
      expect(allowed.headers.get('access-control-allow-headers')?.toLowerCase()).toContain(header);
    }

    const refused = await preflight('http://evil.example');
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
  });
});
