/**
 * ownedDocuments against the run's real MongoDB-protocol server (FerretDB unless MONGO_URL names
 * another), where a filtered update alone would let racing writers undo each other.
 */
import { openTestDatabase, type TestDatabase } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Model, Schema, Types } from 'mongoose';
import { createTurns, modelOf, type OwnedDocuments, ownedDocuments } from '../src/index';

interface Counter {
  _id: Types.ObjectId;
  ownerId: string;
  count: number;
  note?: string;
  version?: number;
}

let db: TestDatabase;
let counters: Model<Counter>;
let owned: OwnedDocuments<Counter>;

beforeAll(async () => {
  db = await openTestDatabase(__filename);
  counters = modelOf(
    db.connection,
    'Counter',
    new Schema<Counter>(
      { ownerId: String, count: Number, note: String, version: { type: Number, default: 0 } },
      { versionKey: false },
    ),
  );
  owned = ownedDocuments(counters, await createTurns(db.connection), {
    subject: 'counter',
    owner: 'ownerId',
    missing: () => new Error('missing'),
    busy: () => new Error('busy'),
  });
});
afterAll(async () => {
  await db.drop();
});

const newCounter = async (ownerId = 'alice') =>
  (await counters.create({ _id: new Types.ObjectId(), ownerId, count: 0 }))._id.toHexString();

describe('ownedDocuments', () => {
  it('when 6 updates each add one to what they read, at once, then none is lost', async () => {
    const id = await newCounter();
    await Promise.all(
      Array.from({ length: 6 }, () => owned.update(id, 'alice', (current) => ({ set: { count: current.count + 1 } }))),
    );
    expect((await owned.find(id, 'alice'))?.count).toBe(6);
  });

  it('when an update names fields to unset, then they are gone, and it answers the document before and after', async () => {
    const id = await newCounter();
    await owned.update(id, 'alice', () => ({ set: { note: 'hi' } }));
    const { before, after } = await owned.update(id, 'alice', () => ({ set: { count: 1 }, unset: ['note'] }));
    expect([before.note, before.count]).toEqual(['hi', 0]);
    expect([after.note, after.count]).toEqual([undefined, 1]);
  });

  it('when the caller does not own the document, then update throws missing and remove answers undefined, and it stays', async () => {
    const id = await newCounter('alice');
    await expect(owned.update(id, 'mallory', () => ({ set: { count: 9 } }))).rejects.toThrow('missing');
    expect(await owned.remove(id, 'mallory')).toBeUndefined();
    expect((await owned.find(id, 'alice'))?.count).toBe(0);
  });

  it('when a change finds nothing to write, then no turn is used up: the next update writes at once', async () => {
    const id = await newCounter();
    const { after } = await owned.update(id, 'alice', () => undefined);
    expect(after.count).toBe(0);
    const started = Date.now();
    await owned.update(id, 'alice', (current) => ({ set: { count: current.count + 1 } }));
    expect(Date.now() - started).toBeLessThan(1000);
    expect((await owned.find(id, 'alice'))?.version).toBe(1);
  });

  it('when a remove races an update, then the document is gone and prepare ran with the version that went', async () => {
    const id = await newCounter();
    const [, removed] = await Promise.all([
      owned.update(id, 'alice', (current) => ({ set: { count: current.count + 1 } })).catch(() => undefined),
      owned.remove(id, 'alice', async (current) => current.count),
    ]);
    expect(removed?.prepared).toBe(removed?.removed.count);
    expect(await owned.find(id, 'alice')).toBeNull();
  });
});
