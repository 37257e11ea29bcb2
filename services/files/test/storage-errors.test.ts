import { freePort } from '@cs/devstack';
import { openTestDatabase, type TestDatabase } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type FilesHarness, newCaller, startFiles, uploadFile } from './helpers';

let db: TestDatabase;
let good: FilesHarness;
const owner = newCaller();

beforeAll(async () => {
  db = await openTestDatabase(__filename);
  good = await startFiles(__filename, {}, db);
});
afterAll(async () => {
  await good.close();
  await db.drop();
});

/** A key this owner really uploaded, through the correctly configured app. */
async function uploadedKey(): Promise<string> {
  return uploadFile(good, owner, 'exists');
}

describe('storage errors, each from the real storage server', () => {
  it('when the bucket does not exist (NoSuchBucket), then readiness fails and operations give a generic 500 with the cause logged', async () => {
    const key = await uploadedKey();
    const h = await startFiles(__filename, { STORAGE_BUCKET: 'no-such-bucket-here' }, db);
    try {
      const ready = await h.http.get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({ error: 'Not ready', checks: { database: 'ok', storage: 'failing' } });

      const res = await h.http.post('/internal/uploads/claim').set(owner.auth).send({ key });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: 'Storage operation failed' });
      expect(res.text).not.toContain('no-such-bucket-here');
      expect(h.logs.text()).toContain('NoSuchBucket');

      const link = await h.http
        .post('/upload-url')
        .set(owner.auth)
        .send({ contentType: 'text/plain', filename: 'a.txt', size: 1 });
      expect(link.status).toBe(500);
      expect(link.body).toEqual({ error: 'Storage operation failed' });
    } finally {
      await h.close();
    }
  });

  it('when the credentials are wrong (signature or access-key errors), then a generic 500 with the cause logged', async () => {
    const key = await uploadedKey();
    const wrong: Record<string, string>[] = [
      { S3_SECRET_ACCESS_KEY: 'not-the-secret' },
      { S3_ACCESS_KEY_ID: 'nobody-at-all' },
    ];
    for (const env of wrong) {
      const h = await startFiles(__filename, env, db);
      try {
        const res = await h.http.post('/internal/uploads/claim').set(owner.auth).send({ key });
        expect(res.status).toBe(500);
        expect(res.body).toEqual({ error: 'Storage operation failed' });
        expect(h.logs.text()).toMatch(/"status":500/);
        expect((await h.http.get('/readyz')).status).toBe(503);
      } finally {
        await h.close();
      }
    }
  });

  it('when storage cannot be reached, then 503 storage-unavailable, quickly, and readiness fails', async () => {
    const key = await uploadedKey();
    const h = await startFiles(__filename, { S3_ENDPOINT: `http://127.0.0.1:${await freePort()}` }, db);
    try {
      const started = Date.now();
      const res = await h.http.post('/internal/uploads/claim').set(owner.auth).send({ key });
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ error: 'Storage temporarily unavailable' });
      expect(Date.now() - started).toBeLessThan(10_000);
      expect((await h.http.get('/readyz')).status).toBe(503);

      // A link is signed without storage: it is still refused, rather than one that cannot work.
      const link = await h.http
        .post('/upload-url')
        .set(owner.auth)
        .send({ contentType: 'text/plain', filename: 'a.txt', size: 1 });
      expect(link.status).toBe(503);
      expect(link.body).toEqual({ error: 'Storage temporarily unavailable' });
    } finally {
      await h.close();
    }
  });

  it('when everything is configured, then readiness is 200', async () => {
    const res = await good.http.get('/readyz');
    expect(res.status).toBe(200);
  });
});
