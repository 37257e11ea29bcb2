/**
 * `GET /api/notes?q=` searches the caller's own notes (title and body), ranked, with further pages
 * through the Link header. Matching itself is held in libs/search's tests; here, that it reaches
 * through the route, and that no one finds another person's notes.
 */
import { searchMessages } from '@cs/contract';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type NotesHarness, newCaller, startNotes } from './helpers';

let h: NotesHarness;
const me = newCaller();
const someoneElse = newCaller();
const note: Record<string, string> = {};

beforeAll(async () => {
  h = await startNotes(__filename);
  const write = async (caller: ReturnType<typeof newCaller>, name: string, fields: Record<string, string>) => {
    note[name] = (await h.http.post('/api/notes').set(caller.auth).send(fields).expect(201)).body._id;
  };
  await write(me, 'inBody', { title: 'Groceries', body: 'Buy saffron and rice for the paella.' });
  await write(me, 'inTitle', { title: 'Paella recipe', body: 'Rice, stock, and patience.' });
  await write(me, 'unrelated', { title: 'Dentist', body: 'Tuesday at nine.' });
  await write(someoneElse, 'theirs', { title: 'Paella night', body: 'Their paella, not mine.' });
});
afterAll(async () => {
  await h.close();
});

const idsOf = (res: { body: { _id: string }[] }) => res.body.map((n) => n._id);

describe('GET /api/notes?q=', () => {
  it('finds the caller’s notes that match, a match in the title first, and never another person’s', async () => {
    const mine = await h.http.get('/api/notes').set(me.auth).query({ q: 'paella' });
    const theirs = await h.http.get('/api/notes').set(someoneElse.auth).query({ q: 'paella' });

    expect(mine.status).toBe(200);
    expect(idsOf(mine)).toEqual([note.inTitle, note.inBody]);
    expect(idsOf(theirs)).toEqual([note.theirs]);
  });

  it('forgives a typo and matches the last word as it is typed', async () => {
    expect(idsOf(await h.http.get('/api/notes').set(me.auth).query({ q: 'safron' }))).toEqual([note.inBody]);
    expect(idsOf(await h.http.get('/api/notes').set(me.auth).query({ q: 'tues' }))).toEqual([note.unrelated]);
  });

  it('gives further pages through the Link header, which keeps the search', async () => {
    const first = await h.http.get('/api/notes').set(me.auth).query({ q: 'rice', limit: 1 });
    const link = /^<([^>]+)>; rel="next"$/.exec(first.headers.link ?? '')?.[1] as string;
    expect(link).toMatch(/^\/api\/notes\?q=rice&limit=1&cursor=[A-Za-z0-9_-]+$/);
    const second = await h.http.get(link).set(me.auth);

    expect(new Set([...idsOf(first), ...idsOf(second)])).toEqual(new Set([note.inBody, note.inTitle]));
    expect(second.headers.link).toBeUndefined();
  });

  it('answers the whole list for an empty q, and 400 for one past its bounds', async () => {
    const all = await h.http.get('/api/notes').set(me.auth);
    const empty = await h.http.get('/api/notes').set(me.auth).query({ q: '' });
    const long = await h.http
      .get('/api/notes')
      .set(me.auth)
      .query({ q: 'y'.repeat(201) });

    expect(empty.body).toEqual(all.body);
    expect(long.status).toBe(400);
    expect(long.body).toEqual({ error: searchMessages.tooLong });
  });
});
