/**
 * Search through the client library, against the whole real system: `q` on the public list (with a
 * tag, and paged), on the caller's own posts and on notes (a further page keeps the search), and a
 * search past its bounds as the ApiError a program can act on.
 */
import { randomBytes } from 'node:crypto';
import type { RunningSystem } from '@cs/devstack';
import { startTestSystem } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApiError, createContentClient } from '../src/index.js';

let system: RunningSystem;

beforeAll(async () => {
  system = await startTestSystem({ env: { AUTH_RATE_LIMIT: '0' } });
}, 60_000);

afterAll(async () => {
  await system?.stop();
});

/** A word no other test writes, so the results are this test's alone: letters only, as words are. */
const unique = () => `zq${[...randomBytes(6)].map((byte) => String.fromCharCode(97 + (byte % 26))).join('')}`;

async function signedIn() {
  const client = createContentClient({ baseUrl: system.gatewayUrl });
  await client.register(`search-${randomBytes(4).toString('hex')}@example.com`, 'correct horse battery');
  return client;
}

describe('search through the client', () => {
  it('when the public list is searched, then the published posts that match come back in its own shape, with a tag too, a page at a time', async () => {
    const client = await signedIn();
    const word = unique();
    const publish = async (title: string, tags: string[]) => {
      const post = await client.posts.create({ title, body: `A body about ${word} and more.`, tags });
      return client.posts.update(post._id, { status: 'published' });
    };
    const travel = await publish(`Crème brûlée in ${word}`, ['travel']);
    const food = await publish(`Dinner in ${word}`, ['food']);
    await client.posts.create({ title: `A draft on ${word}`, body: 'Never found by anyone else.' });

    const all = await client.posts.list({ q: word });
    const prefix = await client.posts.list({ q: `creme ${word.slice(0, 5)}` });
    const tagged = await client.posts.list({ q: word, tag: 'travel' });
    const second = await client.posts.list({ q: word, limit: 1, page: 2 });

    expect(all.posts.map((p) => p._id).sort()).toEqual([travel._id, food._id].sort());
    expect(all).toMatchObject({ total: 2, page: 1, pages: 1 });
    expect(prefix.posts.map((p) => p._id)).toEqual([travel._id]);
    expect(tagged.posts.map((p) => p._id)).toEqual([travel._id]);
    expect(second).toMatchObject({ total: 2, page: 2, pages: 2 });
    expect(second.posts).toHaveLength(1);
  });

  it('when the caller searches their own posts, then their drafts are found too, and no one else finds them', async () => {
    const client = await signedIn();
    const word = unique();
    const draft = await client.posts.create({ title: `Draft ${word}`, body: 'Only its author finds it.' });
    await client.posts.create({ title: 'Something else', body: 'Not about that at all.' });

    const found = await client.posts.mine({ q: word });
    const everything = await client.posts.mine();
    const someoneElse = await (await signedIn()).posts.mine({ q: word });

    expect(found.items.map((p) => p._id)).toEqual([draft._id]);
    expect(everything.items).toHaveLength(2);
    expect(someoneElse.items).toEqual([]);
  });

  it('when notes are searched a page at a time, then the next page keeps the search, and no one finds another’s notes', async () => {
    const client = await signedIn();
    const word = unique();
    const ids = [];
    for (const n of [1, 2, 3]) ids.push((await client.notes.create({ title: `Note ${n}`, body: `On ${word}.` }))._id);
    await client.notes.create({ title: 'Unrelated', body: 'Nothing to find here.' });

    const first = await client.notes.list({ q: word, limit: 2 });
    const rest = await client.notes.list({ q: word, limit: 2, cursor: first.next });
    const stranger = await (await signedIn()).notes.list({ q: word });

    expect(first.items).toHaveLength(2);
    expect(first.next).toEqual(expect.any(String));
    expect(rest.items).toHaveLength(1);
    expect(rest.next).toBeUndefined();
    expect([...first.items, ...rest.items].map((n) => n._id).sort()).toEqual(ids.sort());
    expect(stranger.items).toEqual([]);
  });

  it('when a search is over 10 words, then it rejects with an ApiError 400 that says why', async () => {
    const client = createContentClient({ baseUrl: system.gatewayUrl });
    const error = await client.posts
      .list({ q: 'one two three four five six seven eight nine ten eleven' })
      .catch((e) => e);

    expect(error).toBeInstanceOf(ApiError);
    expect({ status: error.status, message: error.message }).toEqual({
      status: 400,
      message: 'q must be at most 200 characters and 10 words',
    });
  });
});
