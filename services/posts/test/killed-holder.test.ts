/**
 * A post whose next turn is held by a process killed between its turn and its write: the update
 * that finds it waits for the turn to go stale (`@cs/mongo` turns.ts), seconds, and waits aside
 * (`@cs/lifecycle` waiting-aside.ts). With one write place in the process, every other write
 * would otherwise wait behind it, and past the bulkhead's 5 s be refused with a 503.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { STALE_MS } from '@cs/mongo';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { newAuthor, type PostsHarness, seed, startPosts } from './helpers';

let h: PostsHarness;

beforeAll(async () => {
  h = await startPosts(__filename, { WRITE_CONCURRENCY: 1 });
});
afterAll(async () => {
  await h.stop();
});

/** How long the killed holder's turn stays fresh after the test leaves it: the update's wait. */
const FRESH_FOR_MS = 6000;

describe('an update waiting for a killed holder’s turn', () => {
  it('when a post’s next turn was taken by a process killed before its write, then its update waits for the turn to go stale without its write place, and other writes are served meanwhile', async () => {
    const author = newAuthor();
    const other = newAuthor();
    const [id] = await seed(h.model, [{ authorId: author.id, status: 'draft' }]);
    // What a process killed between its turn and its write leaves: the turn after version 0.
    await h.db.connection
      .collection<{ _id: string; at: Date }>('turns')
      .insertOne({ _id: `post:${id}@1`, at: new Date(Date.now() - STALE_MS + FRESH_FOR_MS) });

    const answered: string[] = [];
    const started = Date.now();
    const update = h.http
      .put(`/api/posts/${id}`)
      .set(author.auth)
      .send({ title: 'After the silence' })
      .then((res) => {
        answered.push('update');
        return { status: res.status, title: res.body.title, ms: Date.now() - started };
      });
    await sleep(500);
    const create = h.http
      .post('/api/posts')
      .set(other.auth)
      .send({ title: 'Meanwhile', body: 'Written while the update waits.' })
      .then((res) => {
        answered.push('create');
        return { status: res.status, ms: Date.now() - started };
      });

    const [updated, created] = await Promise.all([update, create]);
    expect(created.status).toBe(201);
    expect(updated).toEqual({ status: 200, title: 'After the silence', ms: expect.any(Number) });
    // The update waited for the turn to go stale; the create did not wait for the update.
    expect(updated.ms).toBeGreaterThanOrEqual(FRESH_FOR_MS - 1000);
    expect(answered).toEqual(['create', 'update']);
  });
});
