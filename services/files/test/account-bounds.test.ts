import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { trusted } from '@cs/mongo';
import { openTestDatabase, type TestDatabase } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type FilesHarness, newCaller, startFiles, uploadFile } from './helpers';

let db: TestDatabase;
let h: FilesHarness;

// Small bounds, so that a test reaches them with a few bytes.
const MAX_BYTES = 100;
const MAX_COUNT = 3;
const MAX_OPEN_MULTIPART = 2;

beforeAll(async () => {
  db = await openTestDatabase(__filename);
  h = await startFiles(
    __filename,
    {
      UPLOAD_MAX_UNCLAIMED_BYTES: String(MAX_BYTES),
      UPLOAD_MAX_UNCLAIMED: String(MAX_COUNT),
      UPLOAD_MAX_OPEN_MULTIPART: String(MAX_OPEN_MULTIPART),
      MULTIPART_PART_SIZE: String(5 * 1024 * 1024),
    },
    db,
  );
});
afterAll(async () => {
  await h.close();
  await db.drop();
});

const bytes = (n: number, c = 'x') => c.repeat(n);
/** The sweeper's steps that keep the budget: the listing (which records new objects), then the cut. */
const pass = async () => {
  await h.sweeper.sweepUnclaimed();
  await h.sweeper.enforceBudget();
};
const claim = (caller: ReturnType<typeof newCaller>, key: string) =>
  h.http.post('/internal/uploads/claim').set(caller.auth).send({ key });
/** Storage's Last-Modified has whole seconds: puts a second apart are ordered by it. */
async function uploadInTurn(caller: ReturnType<typeof newCaller>, sizes: number[]): Promise<string[]> {
  const keys: string[] = [];
  for (const size of sizes) {
    if (keys.length > 0) await sleep(1100);
    keys.push(await uploadFile(h, caller, bytes(size)));
  }
  return keys;
}

describe('what one account can hold not yet attached', () => {
  it('when an account puts more unattached bytes than its budget, then a sweeper pass deletes its oldest until it is within, and a claim of one deleted is refused', async () => {
    const owner = newCaller();
    const bystander = newCaller();
    const [oldest, middle, newest] = await uploadInTurn(owner, [40, 40, 40]);
    const theirs = await uploadFile(h, bystander, bytes(90));

    await pass();

    expect(await h.bucket.headObject(oldest as string)).toBeUndefined();
    expect((await claim(owner, oldest as string)).status).toBe(409);
    expect((await claim(owner, middle as string)).status).toBe(200);
    expect((await claim(owner, newest as string)).status).toBe(200);
    expect((await claim(bystander, theirs)).status).toBe(200);
  });

  it('when an account puts more unattached uploads than its count, then a sweeper pass deletes its oldest until it is within', async () => {
    const owner = newCaller();
    const keys = await uploadInTurn(owner, [1, 1, 1, 1, 1]);

    await pass();

    const kept = await Promise.all(keys.map(async (key) => Boolean(await h.bucket.headObject(key))));
    expect(kept).toEqual([false, false, true, true, true]);
  });

  it('when an account is at its budget, then a link is 429 with Retry-After until a pass has seen an upload attached', async () => {
    const owner = newCaller();
    const [first] = await uploadInTurn(owner, [50, 50]);
    await pass();

    const refused = await h.http
      .post('/upload-url')
      .set(owner.auth)
      .send({ contentType: 'text/plain', filename: 'a.txt', size: 10 });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: expect.any(String) });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(h.config.SWEEP_INTERVAL / 1000);
    // A size-less link counts the upload limit: refused too.
    await h.http.post('/upload-url').set(owner.auth).send({ contentType: 'text/plain', filename: 'a.txt' }).expect(429);
    // Another account is not touched.
    await h.http
      .post('/upload-url')
      .set(newCaller().auth)
      .send({ contentType: 'text/plain', filename: 'a.txt', size: 10 })
      .expect(200);

    expect((await claim(owner, first as string)).status).toBe(200);
    await pass();
    await h.http
      .post('/upload-url')
      .set(owner.auth)
      .send({ contentType: 'text/plain', filename: 'a.txt', size: 10 })
      .expect(200);
  });

  it('when claims and the sweeper recording new objects race, then every claim attaches its object and the object stays', async () => {
    const owner = newCaller();
    const keys = await Promise.all(Array.from({ length: 12 }, (_, i) => uploadFile(h, owner, `r${i}`)));
    const [claims] = await Promise.all([
      Promise.all(keys.map((key) => claim(owner, key).then((res) => res.status))),
      h.sweeper.sweepUnclaimed(),
      h.sweeper.sweepUnclaimed(),
    ]);
    expect(claims).toEqual(keys.map(() => 200));
    for (const key of keys) {
      expect((await h.model.findOne({ key }).lean())?.state).toBe('attached');
      expect(await h.bucket.headObject(key)).toBeDefined();
    }
  });
});

describe('open multipart uploads', () => {
  const create = (caller: ReturnType<typeof newCaller>) =>
    h.http.post('/multipart-uploads').set(caller.auth).send({ contentType: 'text/plain', filename: 'm.txt', size: 10 });

  it('when ten creates race, then exactly UPLOAD_MAX_OPEN_MULTIPART are 201 and the others 429 with Retry-After; an abort lets the next in', async () => {
    const owner = newCaller();
    const answers = await Promise.all(Array.from({ length: 10 }, () => create(owner)));
    const created = answers.filter((res) => res.status === 201);
    const refused = answers.filter((res) => res.status === 429);
    expect(created).toHaveLength(MAX_OPEN_MULTIPART);
    expect(refused).toHaveLength(10 - MAX_OPEN_MULTIPART);
    for (const res of refused) {
      expect(res.body).toEqual({ error: expect.any(String) });
      // The soonest an open upload frees its slot without the caller: the sweeper releasing it.
      const retryAfter = Number(res.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(h.config.UPLOAD_CLAIM_TTL / 1000);
    }

    await h.http.delete(`/multipart-uploads/${created[0]?.body.uploadId}`).set(owner.auth).expect(204);
    expect((await create(owner)).status).toBe(201);
    expect((await create(owner)).status).toBe(429);
  });
});

describe('the sweeper keeps up', () => {
  it('when more than a hundred stale records are due, then one pass releases them all', async () => {
    const owner = newCaller();
    const long = new Date(Date.now() - h.config.UPLOAD_CLAIM_TTL - 60_000);
    const keys = Array.from({ length: 250 }, () => `uploads/${randomUUID()}.txt`);
    await h.model.insertMany(
      keys.map((key) => ({
        key,
        ownerId: owner.id,
        contentType: 'text/plain',
        size: 1,
        state: 'issued',
        issuedAt: long,
      })),
    );

    await h.sweeper.releaseStale();

    expect(await h.model.countDocuments({ key: trusted({ $in: keys }), state: 'released' })).toBe(keys.length);
  });
});
