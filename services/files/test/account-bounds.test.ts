/**
 * What one account can hold in storage before a note attaches it: bytes and uploads through
 * single-PUT links, and open multipart uploads, each bounded however many requests race, on the
 * run's real database (FerretDB by default, where a count followed by an insert does not hold)
 * and with the requests spread over two replicas.
 */
import { openTestDatabase, type TestDatabase } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Caller, type FilesHarness, newCaller, startFiles } from './helpers';

const LINK = 1000;
/** Eight files of LINK bytes: the budget's eight slots hold one each. */
const BOUNDS = {
  UPLOAD_MAX_BYTES: String(LINK),
  UPLOAD_MAX_UNCLAIMED_BYTES: String(8 * LINK),
  UPLOAD_URL_TTL_S: '2',
  UPLOAD_CHECK_DELAY: '200ms',
  UPLOAD_MAX_OPEN_MULTIPART: '3',
};
let db: TestDatabase;
let a: FilesHarness;
let b: FilesHarness;

beforeAll(async () => {
  db = await openTestDatabase(__filename);
  a = await startFiles(__filename, BOUNDS, db);
  b = await startFiles(__filename, BOUNDS, db);
});
afterAll(async () => {
  await a.close();
  await b.close();
  await db.drop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const replica = (i: number) => (i % 2 === 0 ? a : b);

const link = (caller: Caller, i: number, body: object = { size: LINK }) =>
  replica(i)
    .http.post('/upload-url')
    .set(caller.auth)
    .send({ contentType: 'text/plain', filename: 'f.txt', ...body });

/** Every answer's status, counted: `{200: 8, 429: 32}`. */
function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

describe('unclaimed bytes per account, through single-PUT links', () => {
  it('when 40 links with size are asked at once over two replicas, then exactly as many as the bound holds are issued, and the rest get 429 {error} with Retry-After', async () => {
    const caller = newCaller();

    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => link(caller, i)));

    expect(tally(answers.map((r) => r.status))).toEqual({ 200: 8, 429: 32 });
    const refused = answers.find((r) => r.status === 429);
    expect(refused?.body).toEqual({
      error: `Too many uploads are waiting to be attached to a note (at most ${8 * LINK} bytes in 1000 uploads per account); attach or remove some, or wait for unused links to expire`,
    });
    expect(Number(refused?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Another account is not held back by this one.
    expect((await link(newCaller(), 0)).status).toBe(200);
  });

  it('when links without size are asked, then each counts as the upload limit', async () => {
    const caller = newCaller();

    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => link(caller, i, {})));

    expect(tally(answers.map((r) => r.status))).toEqual({ 200: 8, 429: 4 });
  });

  it('when the links expired, then those with nothing put give their share back, and objects put but not attached keep theirs until attached', async () => {
    const caller = newCaller();
    const links = await Promise.all(Array.from({ length: 8 }, (_, i) => link(caller, i).expect(200)));
    // Half of them put their object; none is attached.
    const put = links.slice(0, 4).map((r) => r.body as { url: string; key: string; headers: Record<string, string> });
    for (const { url, headers } of put) {
      expect((await fetch(url, { method: 'PUT', headers, body: 'x'.repeat(LINK) })).status).toBe(200);
    }
    expect((await link(caller, 0)).status).toBe(429);

    await sleep(2_000 + 200 + 300); // the links' life and the check delay

    const after = await Promise.all(Array.from({ length: 6 }, (_, i) => link(caller, i)));
    expect(tally(after.map((r) => r.status))).toEqual({ 200: 4, 429: 2 });
    // Attaching one gives its share back (a replica answers a refusal for a second before it
    // recounts).
    await a.http.post('/internal/uploads/claim').set(caller.auth).send({ key: put[0]?.key }).expect(200);
    await sleep(1_100);
    expect((await link(caller, 1)).status).toBe(200);
    expect((await link(caller, 0)).status).toBe(429);
  });
});

describe('open multipart uploads per account', () => {
  const create = (caller: Caller, i: number) =>
    replica(i)
      .http.post('/multipart-uploads')
      .set(caller.auth)
      .send({ contentType: 'application/zip', filename: 'a.zip', size: 6 * 1024 * 1024 });

  it('when 20 are created at once over two replicas, then exactly the bound is created, the rest get 429 {error} with Retry-After, and an abort makes room', async () => {
    const caller = newCaller();

    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => create(caller, i)));

    expect(tally(answers.map((r) => r.status))).toEqual({ 201: 3, 429: 17 });
    const refused = answers.find((r) => r.status === 429);
    expect(refused?.body).toEqual({
      error: 'At most 3 multipart uploads may be open at once; complete and attach one, or abort one',
    });
    expect(Number(refused?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(await a.model.collection.countDocuments({ ownerId: caller.id, multipart: { $ne: null } })).toBe(3);

    const open = answers.find((r) => r.status === 201)?.body.uploadId;
    await b.http.delete(`/multipart-uploads/${open}`).set(caller.auth).expect(204);
    await sleep(1_100); // a replica answers a refusal for a second before it recounts
    expect((await create(caller, 0)).status).toBe(201);
    expect((await create(caller, 1)).status).toBe(429);
  });
});
