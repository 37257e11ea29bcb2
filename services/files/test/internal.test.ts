import { setTimeout as sleep } from 'node:timers/promises';
import { refusal } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Caller, type FilesHarness, newCaller, startFiles, uploadFile } from './helpers';

let h: FilesHarness;
const owner = newCaller();
const other = newCaller();

beforeAll(async () => {
  h = await startFiles(__filename);
});
afterAll(async () => {
  await h.close();
});

const post = (path: string, caller: Caller, body: unknown) =>
  h.http
    .post(`/internal/uploads/${path}`)
    .set(caller.auth)
    .send(body as object);

describe('POST /internal/uploads/claim', () => {
  it('when the caller owns an uploaded key, then 200 and the key is attached', async () => {
    const key = await uploadFile(h, owner, 'claim me');
    const res = await post('claim', owner, { key });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ key, contentType: 'text/plain', size: 8, filename: 'file.txt' });
    expect(await h.model.findOne({ key }).lean()).toMatchObject({ state: 'attached', attachedAt: expect.any(Date) });
  });

  it('when the key was issued but nothing was uploaded, then 409 and nothing is recorded', async () => {
    const issued = await h.http
      .post('/upload-url')
      .set(owner.auth)
      .send({ contentType: 'text/plain', filename: 'x.txt', size: 1 });
    const res = await post('claim', owner, { key: issued.body.key });

    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'The file has not been uploaded yet' });
    expect(await h.model.findOne({ key: issued.body.key }).lean()).toBeNull();
  });

  it('when the stored object is not the declared size, then 409, the object is deleted and the link can still put a right one', async () => {
    const issued = await h.http
      .post('/upload-url')
      .set(owner.auth)
      .send({ contentType: 'text/plain', filename: 'x.txt', size: 5 });
    const { key, url, headers } = issued.body;
    // What a storage server that ignored the signed length would hold: 40 KiB for 5 bytes.
    await h.bucket.putObject(key, 'x'.repeat(40 * 1024), 'text/plain', { owner: owner.id, size: '5' });

    const res = await post('claim', owner, { key });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'The uploaded file is not the size that was declared; it was removed' });
    expect(await h.bucket.headObject(key)).toBeUndefined();
    expect(await h.model.findOne({ key }).lean()).toBeNull();

    expect((await fetch(url, { method: 'PUT', headers, body: 'right' })).status).toBe(200);
    expect((await post('claim', owner, { key })).status).toBe(200);
  });

  it('when a record from before sizes were required holds an object over the limit, then 409 and the object is deleted', async () => {
    const small = await startFiles(__filename, { UPLOAD_MAX_BYTES: '1024' }, h.db);
    try {
      const key = `uploads/${crypto.randomUUID()}.txt`;
      await small.model.create({ key, ownerId: owner.id, contentType: 'text/plain', size: null, issuedAt: new Date() });
      await small.bucket.putObject(key, 'x'.repeat(1025), 'text/plain');

      const res = await small.http.post('/internal/uploads/claim').set(owner.auth).send({ key });
      expect(res.status).toBe(409);
      expect(await small.bucket.headObject(key)).toBeUndefined();
    } finally {
      await small.close();
    }
  });

  it("when another user claims the owner's key, then 404, nothing is recorded, and the owner can still claim it", async () => {
    const key = await uploadFile(h, owner, 'mine');
    const res = await post('claim', other, { key });

    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Upload not found' });
    expect(await h.model.findOne({ key }).lean()).toBeNull();
    await post('claim', owner, { key }).expect(200);
  });

  it('when an object has no owner in its metadata (not put by one of our links), then 404 and it is left alone', async () => {
    const key = `uploads/${crypto.randomUUID()}.txt`;
    await h.bucket.putObject(key, 'stray', 'text/plain');

    expect((await post('claim', owner, { key })).status).toBe(404);
    expect(await h.bucket.headObject(key)).toBeDefined();
  });

  it('when the object was put longer ago than the claim TTL, then 409: the sweeper is about to remove it', async () => {
    const strict = await startFiles(__filename, { UPLOAD_CLAIM_TTL: '1s' }, h.db);
    try {
      const key = await uploadFile(strict, owner, 'late');
      await sleep(2100);

      const res = await strict.http.post('/internal/uploads/claim').set(owner.auth).send({ key });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error: 'The file was uploaded too long ago to be attached; upload it again' });
      expect(await strict.model.findOne({ key }).lean()).toBeNull();
    } finally {
      await strict.close();
    }
  });

  it('when the object was put late in a second and is claimed within the claim TTL, then 200: Last-Modified has whole seconds', async () => {
    const strict = await startFiles(__filename, { UPLOAD_CLAIM_TTL: '1s' }, h.db);
    try {
      // A put in the last 150 ms of a second, so that its Last-Modified (that second, .000) is
      // more than the TTL old at the claim while the put itself is not. Again if it slipped over.
      for (let attempt = 0; ; attempt++) {
        await sleep(1000 - (Date.now() % 1000) + 850);
        const putFrom = Date.now();
        const key = await uploadFile(strict, owner, 'late in a second');
        const lastModified = (await strict.bucket.headObject(key))?.lastModified.getTime() ?? 0;
        const claimAt = lastModified + 1100;
        if (claimAt - putFrom >= 900) {
          if (attempt < 5) continue;
          throw new Error('could not put an object late in a second');
        }
        await sleep(claimAt - Date.now());
        const sentAt = Date.now();
        const res = await strict.http.post('/internal/uploads/claim').set(owner.auth).send({ key });
        expect(sentAt - putFrom).toBeLessThan(1000);
        expect(res.status).toBe(200);
        return;
      }
    } finally {
      await strict.close();
    }
  });

  it('when a key is claimed twice, then the second is 409', async () => {
    const key = await uploadFile(h, owner, 'once');
    await post('claim', owner, { key }).expect(200);

    const again = await post('claim', owner, { key });
    expect(again.status).toBe(409);
  });

  it.each([{}, { key: 'not-a-key' }, { key: 'uploads/../../etc/passwd' }, { key: { $ne: null } }, { key: 42 }])(
    'when the body is %j, then 400',
    async (body) => {
      const res = await post('claim', owner, body);

      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal('key must be an upload key issued by /upload-url'));
    },
  );

  it('when there is no token, then 401', async () => {
    const res = await h.http.post('/internal/uploads/claim').send({ key: 'x' });
    expect(res.status).toBe(401);
  });
});

describe('POST /internal/uploads/download-link', () => {
  it('when the caller owns an attached key, then a GET on the link returns the exact bytes', async () => {
    const bytes = new Uint8Array([0, 1, 2, 250, 255, 10, 13]);
    const key = await uploadFile(h, owner, bytes, 'application/zip');
    await post('claim', owner, { key }).expect(200);

    const res = await post('download-link', owner, { key });
    expect(res.status).toBe(200);
    expect(res.body.expiresIn).toBe(3600);
    expect(new URL(res.body.url).searchParams.get('X-Amz-Expires')).toBe('3600');
    const download = await fetch(res.body.url);
    expect(download.status).toBe(200);
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(bytes);
  });

  it('when another user asks, or the key is not attached, then 404', async () => {
    const key = await uploadFile(h, owner, 'private');
    expect((await post('download-link', owner, { key })).status).toBe(404);
    await post('claim', owner, { key }).expect(200);
    expect((await post('download-link', other, { key })).status).toBe(404);
  });

  it('when the object was deleted from storage (NoSuchKey), then 404 file-not-found', async () => {
    const key = await uploadFile(h, owner, 'gone soon');
    await post('claim', owner, { key }).expect(200);
    await h.bucket.deleteObject(key);

    const res = await post('download-link', owner, { key });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'File not found' });
  });
});

describe('POST /internal/uploads/release', () => {
  it('when the owner releases a key, then 204, the object is deleted and the record says released', async () => {
    const key = await uploadFile(h, owner, 'delete me');
    await post('claim', owner, { key }).expect(200);

    const res = await post('release', owner, { key });
    expect(res.status).toBe(204);
    expect(await h.bucket.headObject(key)).toBeUndefined();
    expect(await h.model.findOne({ key }).lean()).toMatchObject({ state: 'released', releasedAt: expect.any(Date) });

    await post('release', owner, { key }).expect(204);
  });

  it("when another user releases the owner's key, then nothing is deleted", async () => {
    const key = await uploadFile(h, owner, 'keep me');
    await post('claim', owner, { key }).expect(200);

    await post('release', other, { key }).expect(204);
    expect(await h.bucket.headObject(key)).toMatchObject({ size: 7, contentType: 'text/plain' });
    expect((await h.model.findOne({ key }).lean())?.state).toBe('attached');
  });
});
