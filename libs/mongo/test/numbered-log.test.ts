/**
 * The numbered log against the run's real MongoDB-protocol server (FerretDB unless MONGO_URL names
 * another), where conditional writes are not atomic but a unique index is enforced.
 */
import { openTestDatabase, type TestDatabase } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import mongoose, { type Connection } from 'mongoose';
import { appendNumbered, readNumbered } from '../src/index';

let db: TestDatabase;
const clients: Connection[] = [];

beforeAll(async () => {
  db = await openTestDatabase(__filename);
  for (let i = 0; i < 4; i++) clients.push(await mongoose.createConnection(db.url).asPromise());
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await db.drop();
});

type Entry = { _id: number; writer: number };

describe('a numbered log', () => {
  it('when 4 writers, each with its own connection and its own idea of the newest, append 25 entries each at once, then the numbers are 1 to 100, each taken once', async () => {
    const collection = (c: Connection) => c.collection<Entry>('race_log');
    const writers = clients.map(async (c, writer) => {
      let known = 0;
      const mine: number[] = [];
      for (let i = 0; i < 25; i++) {
        known = await appendNumbered(known + 1, (seq) => collection(c).insertOne({ _id: seq, writer }));
        mine.push(known);
      }
      return mine;
    });
    const taken = (await Promise.all(writers)).flat();

    expect([...taken].sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    const stored = await collection(clients[0] as Connection)
      .find({})
      .toArray();
    expect(stored.map((e) => e._id).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  });

  it('when a writer’s first try is long behind the head, then after the first number found taken it goes on after the number skipTo gives: four inserts, not fifty-one', async () => {
    const log = (clients[0] as Connection).collection<Entry>('behind_log');
    await log.insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: i + 1, writer: 0 })));
    const tried: number[] = [];
    const insert = async (seq: number) => {
      tried.push(seq);
      await log.insertOne({ _id: seq, writer: 1 });
    };
    let asked = 0;
    const skipTo = async () => {
      asked += 1;
      return 48;
    };

    expect(await appendNumbered(1, insert, skipTo)).toBe(51);

    // 1 is taken; the hint says 48 exists; 49 and 50 are taken too, then 51 is free.
    expect(tried).toEqual([1, 49, 50, 51]);
    expect(asked).toBe(1);
    expect((await log.find({}).toArray()).map((e) => e._id).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 51 }, (_, i) => i + 1),
    );
  });

  it('when a reader reads after n, then it gets every entry from n + 1 up to the first missing one, or stops once it has enough', async () => {
    const log = (clients[0] as Connection).collection<Entry>('read_log');
    // 1 to 40, then a gap at 41 (not yet written by a slow writer), then 42.
    await log.insertMany([
      ...Array.from({ length: 40 }, (_, i) => ({ _id: i + 1, writer: 0 })),
      { _id: 42, writer: 0 },
    ]);
    const entry = (seq: number) => log.findOne({ _id: seq });
    const numbers = (entries: (Entry | null)[]) => entries.map((e) => e?._id);

    expect(numbers(await readNumbered(3, entry, { window: 8 }))).toEqual(Array.from({ length: 37 }, (_, i) => i + 4));
    expect(await readNumbered(40, entry, { window: 8 })).toEqual([]);
    const some = await readNumbered(0, entry, { window: 8, atLeast: 10 });
    expect(some.length).toBeGreaterThanOrEqual(10);
    expect(numbers(some)).toEqual(Array.from({ length: some.length }, (_, i) => i + 1));
  });
});
