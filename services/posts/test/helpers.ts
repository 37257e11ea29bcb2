import type { DeletedAccounts } from '@cs/mongo';
import {
  api,
  captureLogger,
  newUserId,
  openTestDatabase,
  TEST_JWT_SECRET,
  type TestDatabase,
  type TestEventBus,
  testEventBus,
  verifierWithoutRevocations,
} from '@cs/testkit';
import mongoose, { type Connection, Types } from 'mongoose';
import { coldListBulkhead, createApp, type Deps } from '../src/app';
import { createListing, markListingChanged } from '../src/listing';
import { type PostModel, type PostRecord, postModel } from '../src/model';
import type { PostEvents } from '../src/post-events';
import { createPosts, type Posts } from '../src/posts';
import { createPublicChanges } from '../src/public-changes';

export interface PostsHarness {
  app: Awaited<ReturnType<typeof createApp>>['app'];
  http: ReturnType<typeof api>;
  model: PostModel;
  posts: Posts;
  /** The service's tombstones of deleted accounts. */
  accounts: DeletedAccounts;
  db: TestDatabase;
  logs: ReturnType<typeof captureLogger>;
  /** The bus the service publishes its change events to: a stream of this test's own. */
  events: TestEventBus;
  /** The service's outbox of change events. */
  postEvents: PostEvents;
  /** Drops the database and closes the bus. */
  stop(): Promise<void>;
}

/** The service of a test file, on a database of its own; `config` beyond the JWT secret. */
export async function startPosts(file: string, config: Omit<Deps['config'], 'JWT_SECRET'> = {}): Promise<PostsHarness> {
  const db = await openTestDatabase(file);
  const logs = captureLogger('posts');
  const events = testEventBus();
  const built = await createApp({
    config: { JWT_SECRET: TEST_JWT_SECRET, ...config },
    connection: db.connection,
    logger: logs.logger,
    tokens: verifierWithoutRevocations(),
    bus: events.bus,
  });
  const model = postModel(db.connection);
  const posts = createPosts(model, built.turns, {
    listing: createListing(model, coldListBulkhead({})),
    events: built.events,
    publicChanges: createPublicChanges({}),
  });
  const stop = async () => {
    events.close();
    await db.drop();
  };
  return {
    app: built.app,
    http: api(built.app.callback()),
    model,
    posts,
    accounts: built.accounts,
    db,
    logs,
    events,
    postEvents: built.events,
    stop,
  };
}

/** An author is any caller. */
export { newCaller as newAuthor } from '@cs/testkit';

export interface SeedPost {
  title?: string;
  body?: string;
  authorId?: string;
  status?: 'draft' | 'published';
  tags?: string[];
  createdAt?: Date;
}

/**
 * Inserts posts through the driver, so createdAt is exactly what the test says, and tells the
 * service's kept pages, as any write around the service must. Returns the ids in the order given.
 */
export async function seed(model: PostModel, posts: SeedPost[]): Promise<string[]> {
  const docs = posts.map((p, i) => {
    const createdAt = p.createdAt ?? new Date(Date.UTC(2024, 0, 1) + i * 60_000);
    return {
      _id: new Types.ObjectId(),
      title: p.title ?? `Post ${i}`,
      body: p.body ?? 'A body that is long enough.',
      authorId: new Types.ObjectId(p.authorId ?? newUserId()),
      status: p.status ?? 'published',
      tags: p.tags ?? [],
      publishedAt: (p.status ?? 'published') === 'published' ? createdAt : null,
      createdAt,
      updatedAt: createdAt,
    } satisfies PostRecord;
  });
  await model.collection.insertMany(docs);
  await markListingChanged(model.db);
  return docs.map((d) => d._id.toHexString());
}

/** A tag nobody else's test uses, so list assertions see only this test's posts. */
export function uniqueTag(label: string): string {
  return `${label}-${new Types.ObjectId().toHexString().slice(-10)}`;
}

/** A second replica of the service beside `h`'s, on a connection of its own: its client and connection. */
export interface SecondReplica {
  http: ReturnType<typeof api>;
  connection: Connection;
  close(): Promise<void>;
}

/** Starts a second replica on `h`'s database and bus, as another process would run it. */
export async function startSecondReplica(h: PostsHarness): Promise<SecondReplica> {
  const connection = await mongoose.createConnection(h.db.url).asPromise();
  const { app } = await createApp({
    config: { JWT_SECRET: TEST_JWT_SECRET },
    connection,
    logger: captureLogger('posts-b').logger,
    tokens: verifierWithoutRevocations(),
    bus: h.events.bus,
  });
  return { http: api(app.callback()), connection, close: () => connection.close() };
}
