/**
 * Exactly one taker, on the run's real database (FerretDB by default, where a filtered update is
 * not atomic): several replicas of the files service act on the same records at the same moment.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { openTestDatabase, type TestDatabase } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type FilesHarness, newCaller, startFiles, uploadFile } from './helpers';

let db: TestDatabase;
let replicas: FilesHarness[];
const owner = newCaller();

beforeAll(async () => {
  db = await openTestDatabase(__filename);
  replicas = [];
  for (let i = 0; i < 3; i++) replicas.push(await startFiles(__filename, {}, db));
});
afterAll(async () => {
  for (const r of replicas) await r.close();
  await db.drop();
});

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

  it('when claims and two sweeping replicas race for unclaimed objects, then a claim never attaches an object the sweeper deletes', async () => {
    // Replicas whose claim TTL is 3 s (so their sweep margin is 3 s too). Storage gives times in
    // whole seconds, so an object's Last-Modified (lm) is up to a second before its put: claims
    // are refused from lm + 4 s at the latest, and the sweeper deletes from lm + 6 s at the earliest.
    const quick = await Promise.all([0, 1, 2].map(() => startFiles(__filename, { UPLOAD_CLAIM_TTL: '3s' }, db)));
    const replica = (i: number) => quick[i % quick.length] as FilesHarness;
    const keys = await Promise.all(Array.from({ length: 12 }, (_, i) => uploadFile(replica(i), owner, `s${i}`)));
    const claimAll = () =>
      Promise.all(
        keys.map((key, i) =>
          replica(i)
            .http.post('/internal/uploads/claim')
            .set(owner.auth)
            .send({ key })
            .then((res) => res.status),
        ),
      );
    const sweepTwice = () => Promise.all([replica(1).sweeper.sweepUnclaimed(), replica(2).sweeper.sweepUnclaimed()]);
    const states = () =>
      Promise.all(
        keys.map(async (key) => {
          const record = await replica(0).model.findOne({ key }).lean();
          const object = await replica(0).bucket.headObject(key);
          return `${record?.state ?? 'none'} ${object ? 'object' : 'no-object'}`;
        }),
      );

    // 4.2 s after the puts (4.2-5.5 s after lm): claims are refused, and the sweeper still waits.
    await sleep(4200);
    const [late] = await Promise.all([claimAll(), sweepTwice()]);
    expect(late).toEqual(keys.map(() => 409));
    expect(await states()).toEqual(keys.map(() => 'none object'));

    // Past the margin (6.2 s after the puts): the sweeper deletes them all, and nothing was recorded.
    await sleep(2000);
    await Promise.all([claimAll(), sweepTwice()]);
    expect(await states()).toEqual(keys.map(() => 'none no-object'));
    for (const r of quick) await r.close();
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
