/**
 * Exactly one taker, on the run's real database (FerretDB by default, where a filtered update is
 * not atomic): several replicas of the files service act on the same records at the same moment.
 */
import { openTestDatabase, type TestDatabase } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type FilesHarness, newCaller, startFiles, uploadFile } from './helpers';

let db: TestDatabase;
let replicas: FilesHarness[];
const owner = newCaller();

beforeAll(async () => {
  db = await openTestDatabase(__filename);
  replicas = [];
  for (let i = 0; i < 3; i++) replicas.push(await startFiles(__filename, { UPLOAD_CLAIM_TTL: '1s' }, db));
});
afterAll(async () => {
  for (const r of replicas) await r.close();
  await db.drop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const replica = (i: number) => replicas[i % replicas.length] as FilesHarness;

describe('concurrent state changes of one upload', () => {
  it('when nine claims of one key arrive at once across three replicas, then exactly one succeeds, for each of 20 keys', async () => {
    const keys = await Promise.all(Array.from({ length: 20 }, (_, i) => uploadFile(replica(i), owner, `k${i}`)));
    const outcomes: string[] = [];
    for (const key of keys) {
      const statuses = await Promise.all(
        Array.from({ length: 9 }, (_, i) =>
          replica(i)
            .http.post('/internal/uploads/claim')
            .set(owner.auth)
            .send({ key })
            .then((res) => res.status),
        ),
      );
      outcomes.push(statuses.sort().join(' '));
    }
    expect(outcomes).toEqual(keys.map(() => '200 409 409 409 409 409 409 409 409'));
  });

  it('when a claim and two sweeping replicas race for stale keys, then each key is either attached with its object or released without it', async () => {
    const keys = await Promise.all(Array.from({ length: 12 }, (_, i) => uploadFile(replica(i), owner, `s${i}`)));
    await sleep(1200);
    const [claims] = await Promise.all([
      Promise.all(
        keys.map((key, i) =>
          replica(i)
            .http.post('/internal/uploads/claim')
            .set(owner.auth)
            .send({ key })
            .then((res) => res.status),
        ),
      ),
      replica(1).uploads.sweep(),
      replica(2).uploads.sweep(),
    ]);

    const seen = await Promise.all(
      keys.map(async (key, i) => {
        const record = await replica(0).model.findOne({ key }).lean();
        const object = await replica(0).bucket.headObject(key);
        return `${claims[i]} ${record?.state} ${object ? 'object' : 'no-object'}`;
      }),
    );
    for (const line of seen) expect(['200 attached object', '409 released no-object']).toContain(line);
  });

  it('when three replicas release one attached key at once, then it is released by exactly one of them', async () => {
    const keys = await Promise.all(Array.from({ length: 10 }, (_, i) => uploadFile(replica(i), owner, `r${i}`)));
    for (const key of keys)
      await replica(0).http.post('/internal/uploads/claim').set(owner.auth).send({ key }).expect(200);

    await Promise.all(
      keys.flatMap((key) =>
        [0, 1, 2].map((i) =>
          replica(i).http.post('/internal/uploads/release').set(owner.auth).send({ key }).expect(204),
        ),
      ),
    );

    for (const key of keys) {
      expect(await replica(0).model.findOne({ key }).lean()).toMatchObject({ state: 'released', attempts: 1 });
      expect(await replica(0).bucket.headObject(key)).toBeUndefined();
    }
  });
});
