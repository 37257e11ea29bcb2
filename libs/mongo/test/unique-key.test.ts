/** Claims decided by a unique key, against the run's real MongoDB-protocol server. */
import { openTestDatabase, type TestDatabase } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Schema } from 'mongoose';
import { claimedByInsert, upsertRacing } from '../src/index';

interface Claim {
  _id: string;
  by: number;
}

interface Count {
  _id: string;
  count: number;
}

let db: TestDatabase;

beforeAll(async () => {
  db = await openTestDatabase(__filename);
});
afterAll(async () => {
  await db.drop();
});

const claims = () => db.connection.model<Claim>('Claim', new Schema<Claim>({ _id: String, by: Number }), 'claims');
const counts = () =>
  db.connection.model<Count>(
    'Count',
    new Schema<Count>({ _id: String, count: Number }, { versionKey: false }),
    'counts',
  );

describe('claimedByInsert', () => {
  it('when ten takers race for one key, then exactly one claims it and the document is the winner’s', async () => {
    const model = claims();
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, (_, by) => claimedByInsert(() => model.create({ _id: 'raced', by }))),
    );

    const won = outcomes.flatMap((claimed, by) => (claimed ? [by] : []));
    expect(won).toHaveLength(1);
    expect((await model.findById('raced').lean())?.by).toBe(won[0]);
  });

  it('when the key was taken before, then false, and the document stays as it was', async () => {
    const model = claims();
    expect(await claimedByInsert(() => model.create({ _id: 'earlier', by: 1 }))).toBe(true);

    expect(await claimedByInsert(() => model.create({ _id: 'earlier', by: 2 }))).toBe(false);
    expect((await model.findById('earlier').lean())?.by).toBe(1);
  });

  it('when the insert fails for another reason, then that error is thrown', async () => {
    const refused = new Error('not a duplicate key');

    await expect(claimedByInsert(() => Promise.reject(refused))).rejects.toBe(refused);
  });
});

describe('upsertRacing', () => {
  it('when upserts that each may create the document race, then none fails on the duplicate key', async () => {
    const model = counts();
    await Promise.all(
      Array.from({ length: 10 }, () =>
        upsertRacing(() => model.updateOne({ _id: 'counted' }, { $inc: { count: 1 } }, { upsert: true })),
      ),
    );

    // Promise.all above would have thrown had one failed. The count is at least one: FerretDB may
    // lose an increment to a concurrent one, which is not what this helper is about.
    expect((await model.findById('counted').lean())?.count).toBeGreaterThanOrEqual(1);
  });

  it('when the upsert fails for another reason, then that error is thrown and `again` does not run', async () => {
    const refused = new Error('not a duplicate key');
    let again = 0;

    await expect(
      upsertRacing(
        () => Promise.reject(refused),
        async () => {
          again += 1;
        },
      ),
    ).rejects.toBe(refused);
    expect(again).toBe(0);
  });
});
