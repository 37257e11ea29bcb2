/**
 * The one process's database clients (databases.ts), against the run's real MongoDB-protocol
 * server: the services whose databases are on one server share one client, and each still reads
 * and writes its own database.
 */
import { createLogger } from '@cs/log';
import { MAX_POOL_SIZE, WARM_CONNECTIONS } from '@cs/mongo';
import { openTestDatabase, type TestDatabase, testDatabaseUrl } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import mongoose, { Schema } from 'mongoose';
import { connectServers, type Databases } from '../src/databases';

const logger = createLogger({ name: 'database', level: 'silent' });

describe('connectServers', () => {
  let posts: TestDatabase;
  let notes: TestDatabase;
  let databases: Databases;

  beforeAll(async () => {
    [posts, notes] = await Promise.all([openTestDatabase('posts'), openTestDatabase('notes')]);
    databases = await connectServers([{ MONGO_URL: posts.url }, {}, { MONGO_URL: notes.url }], logger);
  });
  afterAll(async () => {
    await databases.close();
    await Promise.all([posts.drop(), notes.drop()]);
  });

  it('when two services’ databases are on one server, then one client serves both, its pool their two shares, warm ones too', () => {
    const [forPosts, none, forNotes] = databases.databases;

    expect(none).toBeUndefined();
    expect(forPosts?.getClient()).toBe(forNotes?.getClient());
    expect(forPosts?.getClient().options.maxPoolSize).toBe(2 * MAX_POOL_SIZE);
    expect(forPosts?.getClient().options.minPoolSize).toBe(2 * WARM_CONNECTIONS);
  });

  it('when each writes through the shared client, then each write lands in its own database only', async () => {
    const [forPosts, , forNotes] = databases.databases;
    const schema = new Schema({ by: String });
    await forPosts?.model('Written', schema).create({ by: 'posts' });
    await forNotes?.model('Written', schema).create({ by: 'notes' });

    // Read back through the test's own connections, one to each database.
    const read = async (db: TestDatabase) =>
      (
        await db.connection
          .collection('writtens')
          .find({}, { projection: { _id: 0 } })
          .toArray()
      ).map((d) => d.by);
    expect(await read(posts)).toEqual(['posts']);
    expect(await read(notes)).toEqual(['notes']);
  });

  it('when a service names another server, then it gets a client of its own', async () => {
    // The same host, asked for with other options: another client, as it may need other settings.
    const url = testDatabaseUrl('other');
    const other = `${url}${url.includes('?') ? '&' : '?'}appName=other`;
    const apart = await connectServers([{ MONGO_URL: posts.url }, { MONGO_URL: other }], logger);
    try {
      const [forPosts, forOther] = apart.databases;
      expect(forPosts?.getClient()).not.toBe(forOther?.getClient());
      expect(forPosts?.getClient().options.maxPoolSize).toBe(MAX_POOL_SIZE);
      expect(forPosts?.getClient().options.minPoolSize).toBe(WARM_CONNECTIONS);
    } finally {
      await apart.close();
    }
  });

  it('when closed, then the client every database used is closed', async () => {
    const closing = await connectServers([{ MONGO_URL: posts.url }], logger);
    const [database] = closing.databases;
    expect(database?.readyState).toBe(mongoose.ConnectionStates.connected);

    await closing.close();

    expect(database?.readyState).toBe(mongoose.ConnectionStates.disconnected);
  });
});
