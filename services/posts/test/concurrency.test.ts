/**
 * Writes racing for one post, from three replicas of the posts service with their own
 * connections to the run's real database (FerretDB by default, where a filtered update is not
 * atomic): a draft is published exactly once, with one publishedAt.
 */
import { createTurns } from '@cs/mongo';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import mongoose, { type Connection } from 'mongoose';
import { coldListBulkhead } from '../src/app';
import { createListing } from '../src/listing';
import { postEventModel, postModel } from '../src/model';
import { createPostEvents } from '../src/post-events';
import { createPosts, type Posts } from '../src/posts';
import { createPublicChanges } from '../src/public-changes';
import { newAuthor, type PostsHarness, seed, startPosts } from './helpers';

let h: PostsHarness;
const connections: Connection[] = [];
const replicas: Posts[] = [];
const author = newAuthor();

beforeAll(async () => {
  h = await startPosts(__filename);
  for (let i = 0; i < 3; i++) {
    const connection = await mongoose.createConnection(h.db.url).asPromise();
    connections.push(connection);
    const model = postModel(connection);
    const events = createPostEvents({
      entries: postEventModel(connection),
      posts: model,
      bus: h.events.bus,
      logger: h.logs.logger,
    });
    replicas.push(
      createPosts(model, await createTurns(connection), {
        listing: createListing(model, coldListBulkhead({})),
        events,
        // Races, not the per-account limit, are what this file is about: 80 publishes of one author.
        publicChanges: createPublicChanges({ PUBLIC_CHANGES_PER_MINUTE: 0 }),
      }),
    );
  }
});
afterAll(async () => {
  await Promise.all(connections.map((c) => c.close()));
  await h.stop();
});

const replica = (i: number) => replicas[i % replicas.length] as Posts;

describe('writes racing for one post', () => {
  it('when eight updates to published race across three replicas, then all succeed and every answer carries the one publishedAt that was stored, for each of 10 drafts', async () => {
    const ids = await seed(
      h.model,
      Array.from({ length: 10 }, () => ({ authorId: author.id, status: 'draft' as const })),
    );
    const seen: string[] = [];
    for (const id of ids) {
      const posts = await Promise.all(
        Array.from({ length: 8 }, (_, i) => replica(i).update(id, author.id, { status: 'published' })),
      );
      const stored = (await h.model.findById(id).lean())?.publishedAt?.toISOString();
      const dates = new Set(posts.map((p) => p.publishedAt));
      seen.push(`${posts.length} answers, ${dates.size} publishedAt, stored: ${dates.has(stored ?? 'none')}`);
    }
    expect(seen).toEqual(ids.map(() => '8 answers, 1 publishedAt, stored: true'));
  });

  it('when a published post is published again eight times, then its publishedAt stays and the author can still update it', async () => {
    const [id] = (await seed(h.model, [{ authorId: author.id, status: 'published' }])) as [string];
    const stored = (await h.model.findById(id).lean())?.publishedAt?.toISOString();
    for (let i = 0; i < 8; i++) {
      expect((await replica(i).update(id, author.id, { status: 'published' })).publishedAt).toBe(stored);
    }
    const updated = await replica(0).update(id, author.id, { title: 'Still writable' });
    expect(updated.title).toBe('Still writable');
  });
});
