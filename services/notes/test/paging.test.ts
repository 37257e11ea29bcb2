/**
 * The notes list a page at a time: one person with many large notes can no longer make one
 * answer of tens of megabytes (a review's 300 notes of 99 kB gave 29.8 MB).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type NotesHarness, newCaller, startNotes } from './helpers';

let h: NotesHarness;

beforeAll(async () => {
  h = await startNotes(__filename);
});
afterAll(async () => {
  await h.close();
});

/** Writes `count` notes as the caller, one after the other; returns their ids, newest first. */
async function writeNotes(
  caller: ReturnType<typeof newCaller>,
  count: number,
  fields: (i: number) => Record<string, unknown>,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    ids.unshift((await h.http.post('/api/notes').set(caller.auth).send(fields(i))).body._id);
  }
  return ids;
}

/** The path and query of a Link header's rel="next", or undefined. */
function nextOf(link: string | undefined): string | undefined {
  return link === undefined ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)?.[1];
}

describe('GET /api/notes, paged', () => {
  it('when a person has 25 notes, then the first page has the newest 20 and a Link to the other 5; the last page has none', async () => {
    const caller = newCaller();
    const ids = await writeNotes(caller, 25, (i) => ({ title: `note ${i}` }));

    const first = await h.http.get('/api/notes').set(caller.auth);
    expect(first.status).toBe(200);
    expect(first.body.map((n: { _id: string }) => n._id)).toEqual(ids.slice(0, 20));
    const next = nextOf(first.headers.link);
    expect(next).toMatch(/^\/api\/notes\?limit=20&cursor=[A-Za-z0-9_-]+$/);

    const last = await h.http.get(next as string).set(caller.auth);
    expect(last.body.map((n: { _id: string }) => n._id)).toEqual(ids.slice(20));
    expect(last.headers.link).toBeUndefined();
  });

  it('when notes of 99 kB are listed by 7, then every note comes exactly once, newest first, and no page holds more than 7', async () => {
    const caller = newCaller();
    const body = 'x'.repeat(99_000);
    const ids = await writeNotes(caller, 16, (i) => ({ title: `big ${i}`, body }));
    // Someone else's notes never show up, whatever the cursor.
    await h.http.post('/api/notes').set(newCaller().auth).send({ title: 'not yours' });

    const seen: string[] = [];
    const sizes: number[] = [];
    for (let path: string | undefined = '/api/notes?limit=7'; path; ) {
      const res = await h.http.get(path).set(caller.auth);
      expect(res.status).toBe(200);
      sizes.push(res.body.length);
      seen.push(...res.body.map((n: { _id: string }) => n._id));
      path = nextOf(res.headers.link);
    }
    expect(sizes).toEqual([7, 7, 2]);
    expect(seen).toEqual(ids);
  });

  it('when the limit is over 100, then a page holds 100; when it is not a number, then the default of 20', async () => {
    const caller = newCaller();
    await h.notes.insertMany(
      Array.from({ length: 101 }, (_, i) => ({ title: `n${i}`, body: '', authorId: caller.id, attachmentKey: null })),
    );
    const huge = await h.http.get('/api/notes?limit=100000').set(caller.auth);
    expect(huge.body).toHaveLength(100);
    expect(nextOf(huge.headers.link)).toMatch(/^\/api\/notes\?limit=100&cursor=/);
    const rest = await h.http.get(nextOf(huge.headers.link) as string).set(caller.auth);
    expect(rest.body).toHaveLength(1);
    expect((await h.http.get('/api/notes?limit=abc').set(caller.auth)).body).toHaveLength(20);
  });

  it.each([
    ['garbage', 'not-a-cursor!'],
    ['base64 of something else', Buffer.from('{"$gt":""}').toString('base64url')],
    ['given twice (a list)', undefined],
  ])('when the cursor is %s, then 400 {error: "Invalid cursor"}', async (_case, cursor) => {
    const path =
      cursor === undefined ? '/api/notes?cursor=a&cursor=b' : `/api/notes?cursor=${encodeURIComponent(cursor)}`;
    const res = await h.http.get(path).set(newCaller().auth);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Invalid cursor' });
  });
});
