import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { linkSlotModel } from '../src/links/model';
import { attachmentRemovalModel } from '../src/removals/model';
import { type FilesHarness, newCaller, startFiles } from './helpers';

/** Over UPLOAD_MAX_BYTES (25 MiB by default). */
const TOO_LARGE = Buffer.alloc(26 * 1024 * 1024, 7);
const MAX_OPEN = 5;
/** Long enough for a 26 MiB PUT on a loaded machine to begin in time; short enough to wait out. */
const TTL_S = 4;
const CHECK_DELAY_MS = 200;
let h: FilesHarness;

beforeAll(async () => {
  // Links that expire at once and are checked right after, so a test sees the whole life of one.
  h = await startFiles(__filename, {
    UPLOAD_URL_TTL_S: String(TTL_S),
    UPLOAD_CHECK_DELAY: `${CHECK_DELAY_MS}ms`,
    UPLOAD_MAX_OPEN_LINKS: String(MAX_OPEN),
  });
});
afterAll(async () => {
  await h.close();
});

/** The removals outbox's entry for `key` (removals.ts): the note that held it is to be told. */
function removalOf(key: string) {
  return attachmentRemovalModel(h.db.connection).findById(key).lean();
}

/** The contract's request: no size. */
async function sizelessLink(caller = newCaller(), contentType = 'text/plain') {
  const res = await h.http.post('/upload-url').set(caller.auth).send({ contentType, filename: 'notes.txt' });
  if (res.status !== 200) throw new Error(`upload-url answered ${res.status}: ${res.text}`);
  return { caller, ...(res.body as { url: string; key: string; headers: Record<string, string> }) };
}

/** What the contract tells a client to send: the Content-Type header and the bytes, nothing else. */
async function put(url: string, contentType: string, body: Uint8Array | string) {
  return fetch(url, { method: 'PUT', headers: { 'Content-Type': contentType }, body });
}

/** A PUT whose body arrives in pieces over `overMs`: begun while the link is valid, done after. */
function slowPut(url: string, body: Buffer, overMs: number): Promise<number> {
  const pieces = 20;
  const size = Math.ceil(body.length / pieces);
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'PUT',
      headers: { 'Content-Type': 'text/plain', 'Content-Length': body.length },
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    let sent = 0;
    const timer = setInterval(() => {
      req.write(body.subarray(sent * size, (sent + 1) * size));
      sent += 1;
      if (sent === pieces) {
        clearInterval(timer);
        req.end();
      }
    }, overMs / pieces);
  });
}

/** Waits until the key's check is due (its link has expired and the check delay passed). */
async function untilCheckDue(key: string) {
  const record = await h.model.findOne({ key }).lean();
  const due = record?.checkAfter?.getTime() ?? 0;
  await sleep(Math.max(0, due - Date.now() + 50));
}

describe('POST /upload-url without size (the contract’s request)', () => {
  it('when {contentType, filename} is sent, then 200 with a link that signs only the content type, and the link is recorded with its owner, type and time', async () => {
    const before = Date.now();
    const { caller, url, key, headers } = await sizelessLink();

    expect(headers).toEqual({ 'Content-Type': 'text/plain' });
    expect(new URL(url).searchParams.get('X-Amz-SignedHeaders')?.split(';').sort()).toEqual(['content-type', 'host']);
    const record = await h.model.findOne({ key }).lean();
    expect(record).toMatchObject({ ownerId: caller.id, contentType: 'text/plain', size: null, state: 'issued' });
    expect(record?.issuedAt.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(record?.checkAfter?.getTime()).toBe((record?.issuedAt.getTime() ?? 0) + TTL_S * 1000 + CHECK_DELAY_MS);
  });

  it('when the file is put with only its Content-Type, claimed and downloaded, then the download gives the same bytes', async () => {
    const { caller, url, key } = await sizelessLink();
    const bytes = Buffer.from(`size-less ${Date.now()}\n\u0000\u00ff`, 'latin1');

    expect((await put(url, 'text/plain', bytes)).status).toBe(200);
    await h.http.post('/internal/uploads/claim').set(caller.auth).send({ key }).expect(200);
    const link = await h.http.post('/internal/uploads/download-link').set(caller.auth).send({ key }).expect(200);

    const download = await fetch(link.body.url);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('when a 26 MiB object is put through a size-less link, then the claim refuses it and it is gone from storage', async () => {
    const { caller, url, key } = await sizelessLink();
    expect((await put(url, 'text/plain', TOO_LARGE)).status).toBe(200);

    const claim = await h.http.post('/internal/uploads/claim').set(caller.auth).send({ key });

    expect(claim.status).toBe(409);
    expect(claim.body).toEqual({ error: 'The uploaded file is larger than the upload limit; it was removed' });
    expect(await h.bucket.headObject(key)).toBeUndefined();
  });

  it('when the link was issued to another caller, then the claim is a 404 and the object stays', async () => {
    const { url, key } = await sizelessLink();
    expect((await put(url, 'text/plain', 'mine')).status).toBe(200);

    const claim = await h.http.post('/internal/uploads/claim').set(newCaller().auth).send({ key });

    expect(claim.status).toBe(404);
    expect(await h.bucket.headObject(key)).toBeDefined();
  });

  it('when an over-limit object is never claimed, then it stays until its link has expired and the check removes it then', async () => {
    const { url, key } = await sizelessLink();
    expect((await put(url, 'text/plain', TOO_LARGE)).status).toBe(200);

    // Before the check is due, the key is not looked at: the link may still put another object.
    await h.sweeper.checkExpiredLinks();
    expect((await h.model.findOne({ key }).lean())?.checkAfter).toBeInstanceOf(Date);
    expect(await h.bucket.headObject(key)).toBeDefined();

    await untilCheckDue(key);
    const { refused } = await h.sweeper.checkExpiredLinks();

    expect(refused).toBeGreaterThanOrEqual(1);
    expect(await h.bucket.headObject(key)).toBeUndefined();
    expect(await h.model.findOne({ key }).lean()).toMatchObject({
      state: 'released',
      checkAfter: null,
      removedReason: 'The uploaded file is larger than the upload limit; it was removed',
    });
    // No note held it: nobody is to be told.
    expect(await removalOf(key)).toBeNull();
  });

  it('when a claimed object is replaced through its still-valid link by one over the limit, then the check after expiry removes it and records that the note must be told', async () => {
    const { caller, url, key } = await sizelessLink();
    expect((await put(url, 'text/plain', 'the real file')).status).toBe(200);
    await h.http.post('/internal/uploads/claim').set(caller.auth).send({ key }).expect(200);
    expect((await put(url, 'text/plain', TOO_LARGE)).status).toBe(200);

    await untilCheckDue(key);
    await h.sweeper.checkExpiredLinks();

    expect(await h.bucket.headObject(key)).toBeUndefined();
    expect(await h.model.findOne({ key }).lean()).toMatchObject({
      state: 'released',
      removedReason: 'The uploaded file is larger than the upload limit; it was removed',
    });
    expect(await removalOf(key)).toMatchObject({
      ownerId: caller.id,
      reason: 'The uploaded file is larger than the upload limit; it was removed',
    });
  });

  it('when an over-limit PUT begun before the link expired lands after the check, then the listing finds it and the next check removes it', async () => {
    const { caller, url, key } = await sizelessLink();
    expect((await put(url, 'text/plain', 'small')).status).toBe(200);
    await h.http.post('/internal/uploads/claim').set(caller.auth).send({ key }).expect(200);
    // Begun now, while the link is valid; its last bytes arrive after the check has run.
    const landed = slowPut(url, TOO_LARGE, TTL_S * 1000 + CHECK_DELAY_MS + 1500);

    await untilCheckDue(key);
    await h.sweeper.checkExpiredLinks();
    // The check saw the small object: the large one was still arriving.
    expect(await h.model.findOne({ key }).lean()).toMatchObject({ state: 'attached', checkAfter: null });
    expect(await landed).toBe(200);
    expect(await h.bucket.headObject(key)).toMatchObject({ size: TOO_LARGE.length });

    await h.sweeper.sweepUnclaimed();
    await h.sweeper.checkExpiredLinks();

    expect(await h.bucket.headObject(key)).toBeUndefined();
    expect(await h.model.findOne({ key }).lean()).toMatchObject({ state: 'released' });
    expect(await removalOf(key)).toMatchObject({ ownerId: caller.id });
  });

  it('when a removal is announced but the record does not show it yet, then notes is not told and the entry waits for another try', async () => {
    const { caller, url, key } = await sizelessLink();
    expect((await put(url, 'text/plain', 'kept')).status).toBe(200);
    await h.http.post('/internal/uploads/claim').set(caller.auth).send({ key }).expect(200);

    // As a check that died after writing its entry, before the release.
    await h.removals.announce(key, caller.id, 'broken');
    // The outbox's poll, as the service runs it (service.ts), until it has taken the entry once;
    // stopping it waits for that try to end.
    const stop = h.removals.start(20);
    try {
      await eventually(
        'the entry tried once',
        () => removalOf(key),
        (entry) => entry?.attempts === 1,
        { everyMs: 20 },
      );
    } finally {
      await stop();
    }

    expect(await removalOf(key)).toMatchObject({ attempts: 1, lastError: 'the removal has not landed yet' });
    expect(await h.model.findOne({ key }).lean()).toMatchObject({ state: 'attached' });
  });

  it('when a claimed object is left as it was, then the check keeps it', async () => {
    const { caller, url, key } = await sizelessLink();
    expect((await put(url, 'text/plain', 'kept')).status).toBe(200);
    await h.http.post('/internal/uploads/claim').set(caller.auth).send({ key }).expect(200);

    await untilCheckDue(key);
    await h.sweeper.checkExpiredLinks();

    expect(await h.bucket.headObject(key)).toMatchObject({ size: 4 });
    expect(await h.model.findOne({ key }).lean()).toMatchObject({ state: 'attached', checkAfter: null });
  });
});

describe('the bound on open size-less links', () => {
  it(`when ${MAX_OPEN * 3} links are asked for at once, then exactly ${MAX_OPEN} are issued and the rest get 429 with Retry-After`, async () => {
    const caller = newCaller();
    const answers = await Promise.all(
      Array.from({ length: MAX_OPEN * 3 }, () =>
        h.http.post('/upload-url').set(caller.auth).send({ contentType: 'text/plain', filename: 'a.txt' }),
      ),
    );

    expect(answers.filter((r) => r.status === 200)).toHaveLength(MAX_OPEN);
    const refused = answers.filter((r) => r.status !== 200);
    expect(refused.every((r) => r.status === 429)).toBe(true);
    for (const r of refused) {
      expect(r.body.error).toMatch(/^At most 5 upload links without a size/);
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(r.headers['retry-after'])).toBeLessThanOrEqual(TTL_S);
    }
    // A refused request leaves no record behind.
    expect(await h.model.countDocuments({ ownerId: caller.id })).toBe(MAX_OPEN);
  });

  it('when the held links expire, then new ones are issued again; links with size and other callers are never held back', async () => {
    const caller = newCaller();
    for (let i = 0; i < MAX_OPEN; i++) await sizelessLink(caller);
    const send = (body: object, who = caller) => h.http.post('/upload-url').set(who.auth).send(body);

    expect((await send({ contentType: 'text/plain', filename: 'a.txt' })).status).toBe(429);
    expect((await send({ contentType: 'text/plain', filename: 'a.txt', size: 3 })).status).toBe(200);
    expect((await send({ contentType: 'text/plain', filename: 'a.txt' }, newCaller())).status).toBe(200);

    await sleep(TTL_S * 1000 + 100);
    expect((await send({ contentType: 'text/plain', filename: 'a.txt' })).status).toBe(200);
    // The slot's expired lap went once the next one was taken: a caller's slots stay few to read.
    const slots = linkSlotModel(h.db.connection);
    const deadline = Date.now() + 2000;
    while ((await slots.countDocuments({ ownerId: caller.id })) > MAX_OPEN && Date.now() < deadline) await sleep(50);
    expect(await slots.countDocuments({ ownerId: caller.id })).toBe(MAX_OPEN);
  });
});
