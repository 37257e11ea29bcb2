/**
 * What one write of a post costs the database, from its request to its event on the bus
 * (`countWriteCost`, @cs/testkit). A first write before each count takes what is done once per
 * process (indexes) out of it.
 */
import { countWriteCost, type WriteCost } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { newAuthor, type PostsHarness, startPosts } from './helpers';

let h: PostsHarness;
let cost: WriteCost;
const author = newAuthor();

beforeAll(async () => {
  h = await startPosts(__filename);
  cost = countWriteCost(h.db.connection);
});
afterAll(async () => {
  await h.stop();
});

/** Runs `write` and answers the operations it cost, up to its `kind` event on the bus with no entry left. */
function costOf(write: () => Promise<string>, kind: string): Promise<string[]> {
  const entries = h.db.connection.db?.collection('post_events');
  return cost.of(
    write,
    async (id) => {
      const read = await h.events.bus.after('0-0', 10_000);
      const told = !read.gap && read.events.some((e) => (e.data as { _id: string })._id === id && e.kind === kind);
      return told && (await entries?.countDocuments({ postId: id })) === 0;
    },
    (id) => `the ${kind} event of post ${id} on the bus, and no entry left`,
  );
}

const create = async () => {
  const res = await h.http
    .post('/api/posts')
    .set(author.auth)
    .send({ title: 'A post', body: 'A body of at least ten characters.', tags: ['news'] });
  expect(res.status).toBe(201);
  return res.body._id as string;
};

describe('what a write of a post costs the database', () => {
  it('when a post is created, then it costs its event’s entry and the post on the request’s path, and the entry’s deletion after', async () => {
    await costOf(create, 'upsert');

    expect(await costOf(create, 'upsert')).toEqual([
      'post_events.deleteMany',
      'post_events.insertMany',
      'posts.insertMany',
    ]);
  });

  it('when a draft is published, then it costs the read, the turn, the entry, the write and the listing’s mark, then the entry’s deletion: its order needs no look, as this process did its previous entry', async () => {
    const publish = (id: string) => async () => {
      await h.http.put(`/api/posts/${id}`).set(author.auth).send({ status: 'published' }).expect(200);
      return id;
    };
    await costOf(publish(await create()), 'upsert');
    const id = await create();
    await costOf(async () => id, 'upsert');

    expect(await costOf(publish(id), 'upsert')).toEqual([
      'listing_changes.insertOne',
      'post_events.deleteMany',
      'post_events.insertMany',
      'posts.findOne',
      'posts.findOneAndUpdate',
      'turns.insertOne',
    ]);
  });

  it('when a draft is published with a new title and tags in one PATCH, then it costs what publishing alone costs: one write of the post', async () => {
    const change = (id: string) => async () => {
      await h.http
        .patch(`/api/posts/${id}`)
        .set(author.auth)
        .send({ status: 'published', title: 'Renamed', tags: ['walks', 'coast'] })
        .expect(200);
      return id;
    };
    await costOf(change(await create()), 'upsert');
    const id = await create();
    await costOf(async () => id, 'upsert');

    expect(await costOf(change(id), 'upsert')).toEqual([
      'listing_changes.insertOne',
      'post_events.deleteMany',
      'post_events.insertMany',
      'posts.findOne',
      'posts.findOneAndUpdate',
      'turns.insertOne',
    ]);
  });

  it('when ten posts are created in one turn, then their entries go in one insert and the posts in another', async () => {
    await costOf(create, 'upsert');
    const entries = h.db.connection.db?.collection('post_events');
    const titles = Array.from({ length: 10 }, (_, i) => `Together ${i}`);

    const sent = await cost.of(
      async () =>
        (
          await Promise.all(
            titles.map((title) =>
              h.posts.create(author.id, { title, body: 'A body of at least ten characters.', tags: [] }),
            ),
          )
        ).map((post) => post._id),
      async (ids) => {
        const read = await h.events.bus.after('0-0', 10_000);
        if (read.gap) return false;
        const told = new Set(read.events.map((e) => (e.data as { _id: string })._id));
        return ids.every((id) => told.has(id)) && (await entries?.countDocuments({ postId: { $in: ids } })) === 0;
      },
      () => 'the ten posts told on the bus, and no entry left',
    );

    expect(sent.filter((operation) => operation.includes('insert'))).toEqual([
      'post_events.insertMany',
      'posts.insertMany',
    ]);
  });
});
