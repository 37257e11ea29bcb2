/** Inserts asked for together, against the run's real MongoDB-protocol server. */
import { createServer, type Socket, connect as tcpConnect } from 'node:net';
import { isUnavailable } from '@cs/errors';
import { openTestDatabase, type TestDatabase } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Connection, Schema } from 'mongoose';
import { batchedByTurn, connectMongo, insertTogether, isDuplicateKey } from '../src/index';

interface Item {
  _id: string;
  title: string;
  createdAt?: Date;
}

const schema = new Schema<Item>(
  { _id: String, title: { type: String, required: true, maxlength: 20 } },
  { timestamps: true },
);

let db: TestDatabase;
const sent: string[] = [];

beforeAll(async () => {
  db = await openTestDatabase(__filename);
  db.connection.set('debug', (collection: string, method: string) => {
    sent.push(`${collection}.${method}`);
  });
});
afterAll(async () => {
  await db.drop();
});

const modelOn = (connection: Connection, name: string) => connection.model<Item>(name, schema, name);

describe('batchedByTurn', () => {
  it('when items are asked for in one turn, then they go in one run, and each caller gets its own outcome', async () => {
    const runs: number[][] = [];
    const double = batchedByTurn<number, number>(async (items) => {
      runs.push(items);
      return items.map((n) => (n < 0 ? { error: new Error(`negative ${n}`) } : { value: n * 2 }));
    });

    const together = await Promise.allSettled([double(1), double(-2), double(3)]);
    const alone = await double(4);

    expect(runs).toEqual([[1, -2, 3], [4]]);
    expect(together.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message))).toEqual([
      2,
      'negative -2',
      6,
    ]);
    expect(alone).toBe(8);
  });

  it('when a run throws, then every item of its batch fails with its error, and the next batch runs', async () => {
    let calls = 0;
    const flaky = batchedByTurn<number, number>(async (items) => {
      calls += 1;
      if (calls === 1) throw new Error('the server went away');
      return items.map((n) => ({ value: n }));
    });

    const failed = await Promise.allSettled([flaky(1), flaky(2)]);

    expect(failed.map((o) => o.status === 'rejected' && (o.reason as Error).message)).toEqual([
      'the server went away',
      'the server went away',
    ]);
    expect(await flaky(3)).toBe(3);
  });
});

describe('insertTogether', () => {
  it('when documents are inserted in one turn, then one insertMany stores them all, stamped as a save would', async () => {
    const items = modelOn(db.connection, 'together_stored');
    const insert = insertTogether(items);
    const docs = ['a', 'b', 'c'].map((id) => new items({ _id: id, title: `title ${id}` }));
    sent.length = 0;

    await Promise.all(docs.map(insert));

    expect(sent).toEqual(['together_stored.insertMany']);
    const stored = await items.find().sort({ _id: 1 }).lean();
    expect(stored.map(({ _id, title }) => ({ _id, title }))).toEqual([
      { _id: 'a', title: 'title a' },
      { _id: 'b', title: 'title b' },
      { _id: 'c', title: 'title c' },
    ]);
    expect(stored.every((doc) => doc.createdAt instanceof Date)).toBe(true);
    expect(docs.every((doc) => !doc.isNew)).toBe(true);
  });

  it('when one document of a batch has a key that is taken, then only its caller fails, with a duplicate-key error, and the others are stored', async () => {
    const items = modelOn(db.connection, 'together_duplicate');
    await items.create({ _id: 'taken', title: 'first' });
    const insert = insertTogether(items);

    const outcomes = await Promise.allSettled(
      ['before', 'taken', 'after'].map((id) => insert(new items({ _id: id, title: `title ${id}` }))),
    );

    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const refused = (outcomes[1] as PromiseRejectedResult).reason;
    expect(refused).toBeInstanceOf(Error);
    expect(isDuplicateKey(refused)).toBe(true);
    expect(refused).not.toHaveProperty('op');
    expect((await items.find().sort({ _id: 1 }).lean()).map((doc) => [doc._id, doc.title])).toEqual([
      ['after', 'title after'],
      ['before', 'title before'],
      ['taken', 'first'],
    ]);
  });

  it('when one document of a batch is invalid, then only its caller fails, with its validation error', async () => {
    const items = modelOn(db.connection, 'together_invalid');
    const insert = insertTogether(items);

    const outcomes = await Promise.allSettled([
      insert(new items({ _id: 'ok', title: 'fine' })),
      insert(new items({ _id: 'long', title: 'a title far too long to be kept' })),
    ]);

    expect(outcomes[0]?.status).toBe('fulfilled');
    expect(outcomes[1]).toMatchObject({ status: 'rejected', reason: { name: 'ValidationError' } });
    expect((await items.find().lean()).map((doc) => doc._id)).toEqual(['ok']);
  });

  it('when the server goes away, then every caller fails with the driver’s own error, told as unavailable', async () => {
    const target = new URL(db.url);
    const sockets = new Set<Socket>();
    const proxy = createServer((client) => {
      const server = tcpConnect(Number(target.port), target.hostname);
      for (const socket of [client, server]) {
        sockets.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => sockets.delete(socket));
      }
      client.pipe(server).pipe(client);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const viaProxy = new URL(db.url);
    viaProxy.host = `127.0.0.1:${(proxy.address() as { port: number }).port}`;
    const connection = await connectMongo(viaProxy.toString());
    try {
      const items = modelOn(connection, 'together_away');
      const insert = insertTogether(items);
      await insert(new items({ _id: 'before', title: 'stored' }));
      proxy.close();
      for (const socket of sockets) socket.destroy();

      const outcomes = await Promise.allSettled(['x', 'y'].map((id) => insert(new items({ _id: id, title: id }))));

      for (const outcome of outcomes) {
        expect(outcome.status).toBe('rejected');
        const { reason } = outcome as PromiseRejectedResult;
        expect((reason as Error).name).toMatch(/^Mongo(Network|ServerSelection|PoolCleared)/);
        expect(isUnavailable(reason)).toBe(true);
      }
    } finally {
      await connection.close(true);
    }
  });
});
