/**
 * The public list kept in memory (listing.ts), across two replicas of the posts service with
 * their own connections to one real database: the list is kept while nothing is logged, and every
 * change to a published post, made through either replica, is in the other's very next answer.
 */
import { type api, tellDeleted } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import mongoose, { type Connection } from 'mongoose';
import { coldListBulkhead } from '../src/app';
import { createListing, markListingChanged } from '../src/listing';
import { FRESH_MS, REFRESH_AFTER_MS } from '../src/listing-catch-up';
import { createListingLog, type ListingLog } from '../src/listing-log';
import { postModel } from '../src/model';
import {
  newAuthor,
  type PostsHarness,
  type SecondReplica,
  seed,
  startPosts,
  startSecondReplica,
  uniqueTag,
} from './helpers';

let h: PostsHarness;
let other: Connection;
let replica: SecondReplica | undefined;
/** The second replica. */
let b: ReturnType<typeof api>;

beforeAll(async () => {
  h = await startPosts(__filename);
  replica = await startSecondReplica(h);
  ({ http: b, connection: other } = replica);
});
afterAll(async () => {
  await replica?.close();
  await h.stop();
});

/** The titles replica B lists under the tag. */
async function listedOnB(tag: string): Promise<string[]> {
  const res = await b.get('/api/posts').query({ tag, limit: 50 });
  expect(res.status).toBe(200);
  expect(res.body.total).toBe(res.body.posts.length);
  return res.body.posts.map((p: { title: string }) => p.title);
}

describe('kept pages of the public list', () => {
  it('when the database changes behind the service, then the kept page is answered, until the listing is marked changed', async () => {
    const tag = uniqueTag('kept');
    await seed(h.model, [{ title: 'First', tags: [tag] }]);
    expect(await listedOnB(tag)).toEqual(['First']);

    // Written around the service, and not marked: replica B still answers its kept page.
    await h.model.collection.updateOne({ tags: tag }, { $set: { title: 'Changed quietly' } });
    expect(await listedOnB(tag)).toEqual(['First']);

    await markListingChanged(h.model.db);
    expect(await listedOnB(tag)).toEqual(['Changed quietly']);
  });

  it('when a draft is published on replica A, then replica B lists it in its next answer', async () => {
    const tag = uniqueTag('publish');
    const author = newAuthor();
    const [id] = await seed(h.model, [{ title: 'Draft', tags: [tag], status: 'draft', authorId: author.id }]);
    expect(await listedOnB(tag)).toEqual([]);

    await h.http.put(`/api/posts/${id}`).set(author.auth).send({ status: 'published' }).expect(200);
    expect(await listedOnB(tag)).toEqual(['Draft']);
  });

  it('when a published post is renamed, unpublished, or deleted on replica A, then replica B answers each change next', async () => {
    const tag = uniqueTag('change');
    const author = newAuthor();
    const [id] = await seed(h.model, [{ title: 'Before', tags: [tag], authorId: author.id }]);
    expect(await listedOnB(tag)).toEqual(['Before']);

    await h.http.put(`/api/posts/${id}`).set(author.auth).send({ title: 'After' }).expect(200);
    expect(await listedOnB(tag)).toEqual(['After']);

    await h.http.put(`/api/posts/${id}`).set(author.auth).send({ status: 'draft' }).expect(200);
    expect(await listedOnB(tag)).toEqual([]);

    await h.http.put(`/api/posts/${id}`).set(author.auth).send({ status: 'published' }).expect(200);
    expect(await listedOnB(tag)).toEqual(['After']);

    await h.http.delete(`/api/posts/${id}`).set(author.auth).expect(204);
    expect(await listedOnB(tag)).toEqual([]);
  });

  it('when a published post read by id on replica B is renamed, unpublished, or deleted on replica A, then B’s next read by id answers each change, and the post’s author still reads the draft', async () => {
    const author = newAuthor();
    const [id] = await seed(h.model, [{ title: 'Before', authorId: author.id }]);
    const onB = async (headers: Record<string, string> = {}) => {
      const res = await b.get(`/api/posts/${id}`).set(headers);
      return res.status === 200 ? (res.body as { title: string }).title : res.status;
    };
    expect(await onB()).toBe('Before');
    expect(await onB()).toBe('Before');

    await h.http.put(`/api/posts/${id}`).set(author.auth).send({ title: 'After' }).expect(200);
    expect(await onB()).toBe('After');

    await h.http.put(`/api/posts/${id}`).set(author.auth).send({ status: 'draft' }).expect(200);
    expect(await onB()).toBe(404);
    expect(await onB(author.auth)).toBe('After');

    await h.http.put(`/api/posts/${id}`).set(author.auth).send({ status: 'published' }).expect(200);
    expect(await onB()).toBe('After');

    await h.http.delete(`/api/posts/${id}`).set(author.auth).expect(204);
    expect(await onB()).toBe(404);
  });

  it('when a published post is read by id again, then it is answered from memory: no read of the post', async () => {
    const [id] = await seed(h.model, [{ title: 'Kept by id' }]);
    await b.get(`/api/posts/${id}`).expect(200);
    const reads: string[] = [];
    other.set('debug', (collection: string, method: string) => {
      if (collection === 'posts') reads.push(method);
    });
    try {
      for (let i = 0; i < 5; i++) expect((await b.get(`/api/posts/${id}`).expect(200)).body.title).toBe('Kept by id');
    } finally {
      other.set('debug', false);
    }

    expect(reads).toEqual([]);
  });

  it("when an author's account is deleted on replica A, then replica B no longer lists their posts", async () => {
    const tag = uniqueTag('account');
    const author = newAuthor();
    await seed(h.model, [
      { title: 'Theirs', tags: [tag], authorId: author.id },
      { title: 'Kept', tags: [tag] },
    ]);
    expect((await listedOnB(tag)).sort()).toEqual(['Kept', 'Theirs']);

    await tellDeleted(h.http, author).expect(204);
    expect(await listedOnB(tag)).toEqual(['Kept']);
  });

  it('when a post is changed while its page is cut, then the page shows the post as changed, never its draft', async () => {
    const tag = uniqueTag('cut');
    await seed(h.model, [{ title: 'Shown', tags: [tag] }]);
    // Replica B learns the post's place, not yet its text.
    await listedOnB(uniqueTag('other'));

    // Unpublished without the log being told: only the lookup of its text can notice.
    await h.model.collection.updateOne({ tags: tag }, { $set: { status: 'draft' }, $inc: { version: 1 } });
    expect(await listedOnB(tag)).toEqual([]);
  });
});

describe('the change log', () => {
  it('when 40 changes are logged one after another from each of four replicas, then the entries are numbered from 1 without a gap and hold all 40', async () => {
    const connections = await Promise.all(
      Array.from({ length: 4 }, () => mongoose.createConnection(h.db.url).asPromise()),
    );
    try {
      const logs = connections.map((c) => createListingLog(c, 'gapless_log'));
      // Each replica logs its ten one at a time, so the four race each other for every number.
      await Promise.all(
        logs.map(async (log, r) => {
          for (let i = 0; i < 10; i++) await log.record({ postId: `p${r}-${i}` });
        }),
      );
      const reader = createListingLog(other, 'gapless_log');
      const entries = (await reader.after(0, 100)) ?? [];
      expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: entries.length }, (_, i) => i + 1));
      expect(new Set(entries.flatMap((e) => e.changes.map((c) => (c as { postId: string }).postId))).size).toBe(40);
      expect(await reader.head()).toBe(entries.length);
      expect(await reader.after(0, entries.length - 1)).toBeNull();
    } finally {
      await Promise.all(connections.map((c) => c.close()));
    }
  });

  it('when 50 changes are logged at once on one replica, then they share two entries instead of racing for fifty numbers', async () => {
    const log = createListingLog(other, 'group_commit_log');

    const numbers = await Promise.all(Array.from({ length: 50 }, (_, i) => log.record({ postId: `g${i}` })));

    const entries = (await createListingLog(h.db.connection, 'group_commit_log').after(0, 100)) ?? [];
    expect(entries.map((e) => e.seq)).toEqual([1, 2]);
    expect(entries.flatMap((e) => e.changes)).toEqual(Array.from({ length: 50 }, (_, i) => ({ postId: `g${i}` })));
    expect(new Set(numbers)).toEqual(new Set([1, 2]));
  });
});

describe('the list while posts change on another replica', () => {
  it('when 30 posts are unpublished on A while B is read 6 at a time, then no read begun after an unpublish answered shows that post', async () => {
    const tag = uniqueTag('race');
    const author = newAuthor();
    const titles = Array.from({ length: 30 }, (_, i) => `Racing ${i}`);
    const ids = await seed(
      h.model,
      titles.map((title) => ({ title, tags: [tag], authorId: author.id })),
    );
    const answered = new Map<string, number>();
    const reads: { began: number; titles: string[] }[] = [];
    let writing = true;

    const reader = async () => {
      while (writing) {
        const began = performance.now();
        reads.push({ began, titles: await listedOnB(tag) });
      }
    };
    const writer = async () => {
      for (const [i, id] of ids.entries()) {
        await h.http.put(`/api/posts/${id}`).set(author.auth).send({ status: 'draft' }).expect(200);
        answered.set(titles[i] as string, performance.now());
      }
      writing = false;
    };
    await Promise.all([writer(), ...Array.from({ length: 6 }, reader)]);

    const stale = reads.flatMap(({ began, titles: shown }) =>
      shown.filter((title) => began > (answered.get(title) ?? Number.POSITIVE_INFINITY)),
    );
    expect(reads.length).toBeGreaterThan(30);
    expect(stale).toEqual([]);
    expect(await listedOnB(tag)).toEqual([]);
  });
});

describe('reads that arrive while the list catches up', () => {
  it('when a post is read by id 200 times in a row, then the log is looked at no more than once every REFRESH_AFTER_MS', async () => {
    const [id] = await seed(h.model, [{ title: 'Read often' }]);
    const real = createListingLog(other);
    let lookups = 0;
    const counted: ListingLog = {
      record: (change) => real.record(change),
      head: () => real.head(),
      after(seq, max) {
        lookups += 1;
        return real.after(seq, max);
      },
    };
    const listing = createListing(postModel(other), coldListBulkhead({}), counted);
    expect((await listing.published(id as string, 'reader'))?.title).toBe('Read often');

    lookups = 0;
    const began = performance.now();
    for (let i = 0; i < 200; i++) expect((await listing.published(id as string, 'reader'))?.title).toBe('Read often');
    const elapsed = performance.now() - began;

    // Each catch-up begins at least REFRESH_AFTER_MS after the one before it began.
    expect(lookups).toBeLessThanOrEqual(Math.floor(elapsed / REFRESH_AFTER_MS) + 1);
  });

  it('when a change is logged, then it is acknowledged no sooner than FRESH_MS later: no replica still answers from a catch-up that began before it', async () => {
    const author = newAuthor();
    const [id] = await seed(h.model, [{ title: 'Settling', authorId: author.id }]);
    const real = createListingLog(other);
    let loggedAt = Number.NaN;
    const timed: ListingLog = {
      async record(change) {
        const seq = await real.record(change);
        loggedAt = performance.now();
        return seq;
      },
      head: () => real.head(),
      after: (seq, max) => real.after(seq, max),
    };
    const listing = createListing(postModel(other), coldListBulkhead({}), timed);
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      await listing.changed({ postId: id as string });
      waits.push(performance.now() - loggedAt);
    }

    expect(waits.filter((wait) => wait < FRESH_MS)).toEqual([]);
  });

  it('when a change is logged while a catch-up is under way, then a read that arrived after it waits for the next catch-up and shows the change', async () => {
    const tag = uniqueTag('queued');
    const author = newAuthor();
    const [id] = await seed(h.model, [{ title: 'Listed', tags: [tag], authorId: author.id }]);
    const real = createListingLog(other);
    let hold: Promise<void> | undefined;
    let logRead = () => {};
    // A log whose answers arrive late, when the test says: the catch-up under way is slow.
    const slow: ListingLog = {
      record: (change) => real.record(change),
      head: () => real.head(),
      async after(seq, max) {
        const entries = await real.after(seq, max);
        logRead();
        await hold;
        return entries;
      },
    };
    const listing = createListing(postModel(other), coldListBulkhead({}), slow);
    const titles = async () => (await listing.page({ offset: 0, limit: 50, tag }, 'reader')).posts.map((p) => p.title);
    expect(await titles()).toEqual(['Listed']);
    // Past the window of that catch-up: the next read catches up again.
    await new Promise((resolve) => setTimeout(resolve, 2 * FRESH_MS));

    let release = () => {};
    hold = new Promise((resolve) => {
      release = resolve;
    });
    const read = new Promise<void>((resolve) => {
      logRead = resolve;
    });
    const early = titles();
    await read; // the early read's catch-up has looked at the log, and waits
    await h.posts.update(id as string, author.id, { status: 'draft' });
    const late = titles();
    release();

    expect(await early).toEqual(['Listed']);
    expect(await late).toEqual([]);
  });
});
