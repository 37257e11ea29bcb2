/**
 * Turns against the run's real MongoDB-protocol server (FerretDB unless MONGO_URL names another),
 * where a filtered findOneAndUpdate is not atomic but a unique index is enforced.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { openTestDatabase, type TestDatabase } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import mongoose, { type Connection } from 'mongoose';
import { createTurns, HOLD_MS, STALE_MS } from '../src/index';

let db: TestDatabase;
const clients: Connection[] = [];

beforeAll(async () => {
  db = await openTestDatabase(__filename);
  for (let i = 0; i < 8; i++) clients.push(await mongoose.createConnection(db.url).asPromise());
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await db.drop();
});

describe('turns', () => {
  it('when 8 clients, each with its own connection, race at once for the next turn of each of 200 subjects, then every turn goes to exactly one of them', async () => {
    const subjects = Array.from({ length: 200 }, (_, i) => `race-${i}`);
    const racers = await Promise.all(clients.map((c) => createTurns(c, 'race_turns')));
    // Round by round, so that all eight really contend for each turn at the same moment.
    const wins: string[][] = racers.map(() => []);
    for (const subject of subjects) {
      const taken = await Promise.all(racers.map((turns) => turns.take(subject, 0, Date.now())));
      for (const [i, version] of taken.entries()) if (version === 1) wins[i]?.push(subject);
    }
    const winnersOf = new Map<string, number>();
    for (const subject of wins.flat()) winnersOf.set(subject, (winnersOf.get(subject) ?? 0) + 1);
    expect(subjects.filter((s) => winnersOf.get(s) !== 1)).toEqual([]);
    // The race was real: the turns were spread over several clients.
    expect(wins.filter((w) => w.length > 0).length).toBeGreaterThan(1);
  });

  it('when the next turn is held by a live writer, then nobody else gets it; when its holder died long ago, then the next writer skips past it', async () => {
    const turns = await createTurns(db.connection);
    const raw = db.connection.collection<{ _id: string; at: Date }>('turns');
    await raw.insertOne({ _id: 'live@1', at: new Date() });
    await raw.insertOne({ _id: 'dead@1', at: new Date(Date.now() - STALE_MS - 1000) });

    expect(await turns.take('live', 0, Date.now())).toBeUndefined();
    expect(await turns.take('dead', 0, Date.now())).toBe(2);
    expect(await turns.take('dead', 0, Date.now())).toBeUndefined();
  });

  it('when the version was read longer ago than the hold time, then no turn is taken: the caller must read again', async () => {
    const turns = await createTurns(db.connection);
    expect(await turns.take('old-read', 4, Date.now() - HOLD_MS - 1)).toBeUndefined();
    expect(await turns.take('old-read', 4, Date.now())).toBe(5);
  });

  it('when turns are older than an hour, then a prune deletes them and keeps the rest, and only one replica prunes each hour', async () => {
    const [a, b] = await Promise.all([
      createTurns(db.connection, 'prune_turns'),
      createTurns(clients[0] as Connection, 'prune_turns'),
    ]);
    const raw = db.connection.collection<{ _id: string; at: Date }>('prune_turns');
    await raw.insertMany([
      { _id: 'old@1', at: new Date(Date.now() - 3_700_000) },
      { _id: 'old@2', at: new Date(Date.now() - 3_650_000) },
      { _id: 'recent@1', at: new Date() },
    ]);

    const pruned = await Promise.all([a.prune(), b.prune()]);

    expect(pruned.sort()).toEqual([0, 2]);
    expect(
      (await raw.find({}, { projection: { _id: 1 } }).toArray())
        .map((t) => t._id)
        .filter((id) => !id.startsWith('prune@')),
    ).toEqual(['recent@1']);
  });

  it("when a holder's write failed and did not land, then its turn is given back and the next writer takes the one after at once; when it landed after all, then the turn is kept", async () => {
    const turns = await createTurns(db.connection);
    const docs = db.connection.collection<{ _id: string; version: number }>('given_back_docs');
    await docs.insertMany([
      { _id: 'lost', version: 0 },
      { _id: 'landed', version: 0 },
    ]);
    const landed = (id: string, version: number) => async () =>
      ((await docs.findOne({ _id: id }))?.version ?? 0) >= version;

    expect(await turns.take('lost', 0, Date.now())).toBe(1);
    // The write of version 1 failed: nothing was stored.
    await turns.giveBack('lost', 1, landed('lost', 1));
    expect(await turns.take('lost', 0, Date.now())).toBe(2);

    expect(await turns.take('landed', 0, Date.now())).toBe(1);
    // The write timed out but was applied.
    await docs.updateOne({ _id: 'landed' }, { $set: { version: 1 } });
    await turns.giveBack('landed', 1, landed('landed', 1));
    expect(await turns.take('landed', 0, Date.now())).toBeUndefined();
  });

  it('when a write in turn fails, then writeInTurn gives the turn back and the next write goes through', async () => {
    const turns = await createTurns(db.connection);
    const docs = db.connection.collection<{ _id: string; version?: number; n?: number }>('write_in_turn_docs');
    await docs.insertOne({ _id: 'doc' });
    const steps = (write: (version: number) => Promise<void>) => ({
      read: () => docs.findOne({ _id: 'doc' }),
      write: (_doc: unknown, version: number) => write(version),
      missing: () => new Error('missing'),
      busy: () => new Error('busy'),
    });

    await expect(
      turns.writeInTurn(
        'doc',
        steps(async () => Promise.reject(new Error('write timed out'))),
      ),
    ).rejects.toThrow('write timed out');
    // Without the turn given back, this would lose every try to the failed write's turn: busy.
    await turns.writeInTurn(
      'doc',
      steps(async (version) => {
        await docs.updateOne({ _id: 'doc' }, { $set: { version, n: 1 } });
      }),
    );
    expect(await docs.findOne({ _id: 'doc' })).toEqual({ _id: 'doc', version: 2, n: 1 });
  });

  it('when the holder of the next turn went silent (killed before its write), then a writer waits for the turn to go stale and writes, instead of answering busy', async () => {
    const turns = await createTurns(db.connection);
    const docs = db.connection.collection<{ _id: string; version?: number; by?: string }>('silent_holder_docs');
    await docs.insertOne({ _id: 'silent', version: 3 });
    // Taken 1.5 s short of stale, and never written: what a process killed between its turn and
    // its write leaves behind.
    const raw = db.connection.collection<{ _id: string; at: Date }>('turns');
    await raw.insertOne({ _id: 'silent@4', at: new Date(Date.now() - STALE_MS + 1500) });

    const started = Date.now();
    const written = await turns.writeInTurn('silent', {
      read: () => docs.findOne({ _id: 'silent' }),
      write: async (doc, version) => {
        const { matchedCount } = await docs.updateOne(
          { _id: 'silent', version: doc.version },
          { $set: { version, by: 'me' } },
        );
        return matchedCount === 1 ? version : null;
      },
      missing: () => new Error('missing'),
      busy: () => new Error('busy'),
    });
    const took = Date.now() - started;

    expect(written).toBe(5);
    expect(await docs.findOne({ _id: 'silent' })).toEqual({ _id: 'silent', version: 5, by: 'me' });
    expect(took).toBeGreaterThanOrEqual(1000);
    expect(took).toBeLessThan(STALE_MS);
  });

  it('when the silent holder writes after all, then the waiting writer goes on at once, after that write', async () => {
    const turns = await createTurns(db.connection);
    const docs = db.connection.collection<{ _id: string; version?: number; by?: string[] }>('slow_holder_docs');
    await docs.insertOne({ _id: 'slow', version: 0, by: [] });
    const readAt = Date.now();
    expect(await turns.take('slow', 0, readAt)).toBe(1);
    // The holder is slow, not dead: it writes 2 s after its turn.
    const holder = (async () => {
      await sleep(2000);
      await docs.updateOne({ _id: 'slow', version: 0 }, { $set: { version: 1 }, $push: { by: 'holder' } });
    })();

    const started = Date.now();
    await turns.writeInTurn('slow', {
      read: () => docs.findOne({ _id: 'slow' }),
      write: async (doc, version) => {
        const { matchedCount } = await docs.updateOne(
          { _id: 'slow', version: doc.version },
          { $set: { version }, $push: { by: 'waiter' } },
        );
        return matchedCount === 1 ? version : null;
      },
      missing: () => new Error('missing'),
      busy: () => new Error('busy'),
    });
    await holder;

    expect(await docs.findOne({ _id: 'slow' })).toEqual({ _id: 'slow', version: 2, by: ['holder', 'waiter'] });
    // Long before the holder's turn would have gone stale.
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('when eight turns in a row were given back, then the next writer walks past all of them', async () => {
    const turns = await createTurns(db.connection);
    for (let i = 1; i <= 8; i++) {
      expect(await turns.take('given-back-8', 0, Date.now())).toBe(i);
      await turns.giveBack('given-back-8', i, async () => false);
    }
    expect(await turns.take('given-back-8', 0, Date.now())).toBe(9);
  });

  it('when a write names the version it read and the document moved on since, then nothing is written and the turn is given back', async () => {
    const turns = await createTurns(db.connection);
    const docs = db.connection.collection<{ _id: string; version: number; by: string }>('moved_on_docs');
    await docs.insertOne({ _id: 'doc', version: 0, by: 'nobody' });
    const readAt = Date.now();
    // Another writer moves the document on after our read (as a late write would).
    await docs.updateOne({ _id: 'doc' }, { $set: { version: 3, by: 'other' } });

    const done = await turns.advance(
      'moved-on',
      0,
      readAt,
      async (version) => {
        const { matchedCount } = await docs.updateOne({ _id: 'doc', version: 0 }, { $set: { version, by: 'us' } });
        return matchedCount > 0 ? true : null;
      },
      async () => (await docs.findOne({ _id: 'doc' }))?.version ?? 0,
    );

    expect(done).toBeUndefined();
    expect(await docs.findOne({ _id: 'doc' })).toEqual({ _id: 'doc', version: 3, by: 'other' });
  });

  it('when the caller gives the document it read, then the first try writes from it without reading; when that read is out of date, then the next try reads', async () => {
    const turns = await createTurns(db.connection);
    const docs = db.connection.collection<{ _id: string; version?: number | null; by?: string }>('known_docs');
    await docs.insertOne({ _id: 'fresh' });
    await docs.insertOne({ _id: 'moved' });
    const reads: string[] = [];
    const steps = (id: string, readAt: number, known: { _id: string; version?: number | null }) => ({
      read: () => {
        reads.push(id);
        return docs.findOne({ _id: id });
      },
      known: { doc: known, readAt },
      write: async (doc: { version?: number | null }, version: number) => {
        const { matchedCount } = await docs.updateOne(
          { _id: id, version: doc.version ?? null },
          { $set: { version, by: 'us' } },
        );
        return matchedCount > 0 ? version : null;
      },
      missing: () => new Error('missing'),
      busy: () => new Error('busy'),
    });

    const fresh = (await docs.findOne({ _id: 'fresh' })) ?? { _id: 'fresh' };
    expect(await turns.writeInTurn('known-fresh', steps('fresh', Date.now(), fresh))).toBe(1);
    expect(reads).toEqual([]);

    // Another writer moves the document on after the caller's read, without a turn of this subject.
    const stale = (await docs.findOne({ _id: 'moved' })) ?? { _id: 'moved' };
    await docs.updateOne({ _id: 'moved' }, { $set: { version: 5, by: 'other' } });
    expect(await turns.writeInTurn('known-moved', steps('moved', Date.now(), stale))).toBe(6);
    expect(reads).toContain('moved');
    expect(await docs.findOne({ _id: 'moved' })).toEqual({ _id: 'moved', version: 6, by: 'us' });
  });

  it('when check refuses a write, then no turn is used: eight refusals, and the next write is version 1', async () => {
    const turns = await createTurns(db.connection);
    const docs = db.connection.collection<{ _id: string; version?: number | null }>('refused_docs');
    await docs.insertOne({ _id: 'doc' });
    const steps = (refuse: boolean) => ({
      read: () => docs.findOne({ _id: 'doc' }),
      check: () => {
        if (refuse) throw new Error('refused');
      },
      write: async (doc: { version?: number | null }, version: number) => {
        const { matchedCount } = await docs.updateOne(
          { _id: 'doc', version: doc.version ?? null },
          { $set: { version } },
        );
        return matchedCount > 0 ? version : null;
      },
      missing: () => new Error('missing'),
      busy: () => new Error('busy'),
    });
    for (let i = 0; i < 8; i++) await expect(turns.writeInTurn('refused', steps(true))).rejects.toThrow('refused');
    expect(await turns.writeInTurn('refused', steps(false))).toBe(1);
  });
});
