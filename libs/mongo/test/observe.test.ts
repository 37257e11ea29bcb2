/**
 * The database's metrics, against the run's real MongoDB-protocol server: each operation a model
 * issues is timed once, under its own name and collection, with its outcome. (Its spans are
 * proven in the gateway's observability test, against Jaeger.)
 */
import { enableMetrics, type MetricsServer, serveMetrics } from '@cs/telemetry';
import { openTestDatabase, type TestDatabase } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Schema } from 'mongoose';
import { observeOperations } from '../src/observe';
import { insertTogether } from '../src/together';

let db: TestDatabase;
let metrics: MetricsServer;

beforeAll(async () => {
  db = await openTestDatabase(__filename);
  enableMetrics('mongo-test');
  metrics = await serveMetrics({ port: 0, host: '127.0.0.1' });
  observeOperations(db.connection);
});
afterAll(async () => {
  await Promise.all([db.drop(), metrics.close()]);
});

/** `operation outcome` → how many were timed on one collection, as a scrape reads them. */
async function timed(collection: string): Promise<Record<string, number>> {
  const text = await (await fetch(metrics.url)).text();
  const counts: Record<string, number> = {};
  for (const [, labels = '', value] of text.matchAll(/^db_client_operation_duration_seconds_count\{(.*)\} (\d+)$/gm)) {
    const label = (name: string) => labels.match(new RegExp(`${name}="([^"]*)"`))?.[1];
    if (label('collection') === collection) counts[`${label('operation')} ${label('outcome')}`] = Number(value);
  }
  return counts;
}

describe('observeOperations', () => {
  it("when a model's queries, saves and aggregations run, then each is timed once by operation, and a failed one as an error", async () => {
    // Compiled after observeOperations, as the services' models are after connecting.
    const Thing = db.connection.model('Thing', new Schema({ name: { type: String, unique: true }, n: Number }));
    await Thing.init();

    await Thing.create({ name: 'a', n: 1 });
    await Thing.create({ name: 'b', n: 2 });
    await expect(Thing.create({ name: 'a', n: 3 })).rejects.toMatchObject({ code: 11000 });
    expect(await Thing.find({ n: { $gte: 1 } }).lean()).toHaveLength(2);
    expect(await Thing.findOne({ name: 'b' }).lean()).toMatchObject({ n: 2 });
    expect(await Thing.countDocuments({})).toBe(2);
    await Thing.updateOne({ name: 'a' }, { $set: { n: 5 } });
    expect(await Thing.aggregate([{ $match: { name: 'a' } }])).toMatchObject([{ n: 5 }]);
    await Thing.deleteMany({});

    expect(await timed('things')).toEqual({
      'save ok': 2,
      'save error': 1,
      'find ok': 1,
      'findOne ok': 1,
      'countDocuments ok': 1,
      'updateOne ok': 1,
      'aggregate ok': 1,
      'deleteMany ok': 1,
    });
  });

  it('when a document with a nested document is saved, then it is saved and timed once, under its own collection', async () => {
    const Box = db.connection.model(
      'Box',
      new Schema({ label: String, inner: { type: new Schema({ size: Number }, { _id: false }), default: null } }),
    );
    await Box.create({ label: 'a', inner: { size: 3 } });

    expect(await Box.findOne({ label: 'a' }).lean()).toMatchObject({ inner: { size: 3 } });
    expect(await timed('boxes')).toEqual({ 'save ok': 1, 'findOne ok': 1 });
  });

  it('when documents are inserted together, then their one insertMany is timed once, and a failed one as an error', async () => {
    const Crate = db.connection.model('Crate', new Schema({ _id: String }));
    const insert = insertTogether(Crate);

    await Promise.all(['a', 'b', 'c'].map((_id) => insert(new Crate({ _id }))));
    await expect(insert(new Crate({ _id: 'a' }))).rejects.toMatchObject({ code: 11000 });

    expect(await timed('crates')).toEqual({ 'insertMany ok': 1, 'insertMany error': 1 });
  });
});
