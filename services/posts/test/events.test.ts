/**
 * The change events of posts on the bus (a Redis stream of this test's own): what each write
 * tells, to whom, and that a write whose process died before telling is still told.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { StoredEvent } from '@cs/event-bus';
import { eventually } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { newAuthor, type PostsHarness, startPosts } from './helpers';

let h: PostsHarness;
const author = newAuthor();

beforeAll(async () => {
  h = await startPosts(__filename);
});
afterAll(async () => {
  await h.stop();
});

/** The events about one post, as `<topic>.<kind>` with their owner, once there are `count`. */
async function eventsOf(postId: string, count: number): Promise<StoredEvent[]> {
  return eventually(
    `${count} events about post ${postId}`,
    async () => {
      const read = await h.events.bus.after('0-0', 10_000);
      return read.gap ? [] : read.events.filter((e) => (e.data as { _id: string })._id === postId);
    },
    (events) => events.length >= count,
  );
}

/** How often the poller of these tests passes: many passes within the waits below. */
const POLL_MS = 20;

const told = (events: StoredEvent[]) => events.map((e) => `${e.topic}.${e.kind}`);

async function createDraft(tags: string[] = ['news']): Promise<string> {
  const res = await h.http
    .post('/api/posts')
    .set(author.auth)
    .send({ title: 'A post', body: 'A body of at least ten characters.', tags });
  expect(res.status).toBe(201);
  return res.body._id as string;
}

const update = (id: string, changes: Record<string, unknown>) =>
  h.http.put(`/api/posts/${id}`).set(author.auth).send(changes).expect(200);

describe('what a write tells', () => {
  it('when a draft is created, then its author’s my-posts gets it, and the public topic nothing', async () => {
    const id = await createDraft();

    const events = await eventsOf(id, 1);
    await sleep(300);
    expect(told(await eventsOf(id, 1))).toEqual(['my-posts.upsert']);
    expect(events[0]).toMatchObject({ owner: author.id, data: { _id: id, status: 'draft', title: 'A post' } });
  });

  it('when a post is published, edited, then unpublished, then posts gets upsert, upsert, remove, with its tags, and my-posts each version', async () => {
    const id = await createDraft(['news']);
    await eventsOf(id, 1);
    // Each write once the last one's events are out: a slower handler would tell the newer state
    // once for both (the events say what the post is, not each step of how it got there).
    await update(id, { status: 'published' });
    await eventsOf(id, 3);
    await update(id, { title: 'Edited' });
    await eventsOf(id, 5);
    await update(id, { status: 'draft' });

    const events = await eventsOf(id, 7);
    expect(told(events)).toEqual([
      'my-posts.upsert',
      'my-posts.upsert',
      'posts.upsert',
      'my-posts.upsert',
      'posts.upsert',
      'my-posts.upsert',
      'posts.remove',
    ]);
    const publicOnes = events.filter((e) => e.topic === 'posts');
    expect(publicOnes[0]).toMatchObject({ data: { _id: id, status: 'published', title: 'A post' }, tags: ['news'] });
    expect(publicOnes[1]).toMatchObject({ data: { title: 'Edited' }, tags: ['news'] });
    expect(publicOnes[2]).toEqual(expect.objectContaining({ data: { _id: id }, tags: ['news'] }));
    // Public: filed with the topic for every reader, not under the author (@cs/event-bus).
    expect(publicOnes.map((e) => e.owner)).toEqual([undefined, undefined, undefined]);
  });

  it('when a draft is deleted, then only its author hears of it: a draft is never on the public topic', async () => {
    const id = await createDraft();
    await h.http.delete(`/api/posts/${id}`).set(author.auth).expect(204);

    const events = await eventsOf(id, 2);
    await sleep(300);
    expect(told(await eventsOf(id, 2))).toEqual(['my-posts.upsert', 'my-posts.remove']);
    expect(events[1]).toMatchObject({ owner: author.id, data: { _id: id } });
  });

  it('when a published post is deleted, then posts gets remove with its tags, and my-posts too', async () => {
    const id = await createDraft(['news']);
    await eventsOf(id, 1);
    await update(id, { status: 'published' });
    await eventsOf(id, 3);
    await h.http.delete(`/api/posts/${id}`).set(author.auth).expect(204);

    const events = await eventsOf(id, 5);
    expect(told(events).slice(3)).toEqual(['my-posts.remove', 'posts.remove']);
    expect(events[4]).toMatchObject({ data: { _id: id }, tags: ['news'] });
  });
});

describe('a published post whose tags are replaced', () => {
  it('tells the subscribers of each tag it left that it is gone from them (and only them), then the post with its tags', async () => {
    const id = await createDraft(['news', 'travel']);
    await eventsOf(id, 1);
    await update(id, { status: 'published' });
    await eventsOf(id, 3);
    const res = await h.http
      .put(`/api/posts/${id}/tags`)
      .set(author.auth)
      .send({ tags: ['Travel', 'food'] })
      .expect(200);
    expect(res.body.tags).toEqual(['travel', 'food']);

    const events = await eventsOf(id, 6);
    expect(told(events).slice(3)).toEqual(['my-posts.upsert', 'posts.remove', 'posts.upsert']);
    expect(events[4]).toEqual(expect.objectContaining({ data: { _id: id }, tags: ['news'], taggedOnly: true }));
    expect(events[5]).toMatchObject({ data: { _id: id, tags: ['travel', 'food'] }, tags: ['travel', 'food'] });
  });

  it('a draft’s tags are its author’s alone: nothing on the public topic', async () => {
    const id = await createDraft(['news']);
    await eventsOf(id, 1);
    await h.http.put(`/api/posts/${id}/tags`).set(author.auth).send({ tags: [] }).expect(200);
    await eventsOf(id, 2);
    await sleep(300);
    expect(told(await eventsOf(id, 2))).toEqual(['my-posts.upsert', 'my-posts.upsert']);
  });
});

describe('a write whose process died before telling', () => {
  it('when the entry was written and the write landed, but nothing was sent, then the outbox’s next pass sends it, once however often it runs', async () => {
    const id = await createDraft();
    await eventsOf(id, 1);
    const post = await h.model.findById(id).lean();
    // As a process that wrote its entry and the post, and died before trying the entry.
    const entry = await h.postEvents.record({
      postId: id,
      authorId: author.id,
      version: (post?.version ?? 0) + 1,
      before: { status: 'draft', tags: ['news'] },
      publishes: true,
    });
    await h.model.updateOne({ _id: id }, { $set: { status: 'published', version: (post?.version ?? 0) + 1 } });
    expect(entry.attempts).toBe(0);

    // The service's poller, as a process that is still alive runs it: it finds the entry once no
    // dispatch took it, and runs on, pass after pass, after the entry is done.
    const stopPolling = h.postEvents.start(POLL_MS);
    try {
      await eventsOf(id, 3);
      await eventually(
        'the entry is done',
        () => h.db.connection.collection<{ _id: string }>('post_events').countDocuments({ _id: entry._id }),
        (left) => left === 0,
      );
      await sleep(300);
      expect(told(await eventsOf(id, 3))).toEqual(['my-posts.upsert', 'my-posts.upsert', 'posts.upsert']);
    } finally {
      await stopPolling();
    }
  });
});
