/**
 * A file keeps the name it was uploaded under, on every upload path, until it is downloaded: the
 * claim answers it and the download link makes storage send it as `Content-Disposition`. Hostile
 * names come back safe: no header can be injected, no path survives, nothing is longer than a file
 * system takes, and whatever is kept is kept exactly (emoji and quotes included).
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type FilesHarness, newCaller, startFiles, uploadFile, uploadInOnePart } from './helpers';

let h: FilesHarness;
const owner = newCaller();

beforeAll(async () => {
  h = await startFiles(__filename);
});
afterAll(async () => {
  await h.close();
});

/** The headers exactly as storage sent them (fetch would refuse to show a broken one). */
function rawHeaders(url: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    })
      .on('error', reject)
      .end();
  });
}

/** `filename*` of a Content-Disposition, decoded; and the ASCII `filename` beside it. */
function namesIn(disposition: string): { exact: string; fallback: string } {
  const match = /^attachment; filename="([\x20-\x7e]*)"; filename\*=UTF-8''([A-Za-z0-9!#$&+\-.^_`|~%]*)$/.exec(
    disposition,
  );
  if (!match) throw new Error(`not an attachment disposition we send: ${JSON.stringify(disposition)}`);
  return { fallback: match[1] as string, exact: decodeURIComponent(match[2] as string) };
}

const bytes = 'the file';

const sizedUpload = (filename: string) => uploadFile(h, owner, bytes, 'text/plain', filename);

async function sizelessUpload(filename: string): Promise<string> {
  const link = await h.http
    .post('/upload-url')
    .set(owner.auth)
    .send({ contentType: 'text/plain', filename })
    .expect(200);
  expect((await fetch(link.body.url, { method: 'PUT', headers: link.body.headers, body: bytes })).status).toBe(200);
  return link.body.key;
}

const multipartUpload = async (filename: string) =>
  (await uploadInOnePart(h, owner, bytes, { contentType: 'text/plain', filename })).key;

/** Claims `key`, then downloads it through its link: the name the claim gave and the one storage sent. */
async function namesOf(key: string) {
  const claim = await h.http.post('/internal/uploads/claim').set(owner.auth).send({ key }).expect(200);
  const link = await h.http.post('/internal/uploads/download-link').set(owner.auth).send({ key }).expect(200);
  const download = await rawHeaders(link.body.url);
  expect(download.status).toBe(200);
  const disposition = String(download.headers['content-disposition']);
  return { claimed: claim.body, disposition, ...namesIn(disposition) };
}

const longStem = 'a'.repeat(300);
const emojiStem = '😀'.repeat(300);

describe('the name a file was uploaded under', () => {
  it.each([
    ['a plain name', 'receipt.txt', 'receipt.txt', 'receipt.txt'],
    ['quotes', 'report "final".txt', 'report "final".txt', 'report _final_.txt'],
    [
      'CR and LF (header injection)',
      'evil\r\nSet-Cookie: a=b.txt',
      'evilSet-Cookie: a=b.txt',
      'evilSet-Cookie: a=b.txt',
    ],
    ['a relative path', '../../etc/passwd.txt', 'passwd.txt', 'passwd.txt'],
    ['a Windows path', '..\\..\\boot.txt', 'boot.txt', 'boot.txt'],
    ['only dots', '..', 'file', 'file'],
    ['a bidirectional override', 'invoice\u202Etxt.exe', 'invoicetxt.exe', 'invoicetxt.exe'],
    ['emoji and accents', 'résumé 👩‍💻 (2).txt', 'résumé 👩‍💻 (2).txt', 'r_sum_ ___ (2).txt'],
    ['300 characters', `${longStem}.txt`, `${'a'.repeat(251)}.txt`, `${'a'.repeat(251)}.txt`],
    ['300 emoji', `${emojiStem}.txt`, `${'😀'.repeat(62)}.txt`, `${'_'.repeat(62)}.txt`],
  ])(
    '%s: the claim answers it and the download is saved under it, exactly and safely',
    async (_, filename, shown, ascii) => {
      const key = await sizedUpload(filename);
      const { claimed, exact, fallback } = await namesOf(key);
      expect(claimed).toEqual({ key, contentType: 'text/plain', size: bytes.length, filename: shown });
      expect(exact).toBe(shown);
      expect(fallback).toBe(ascii);
      expect(Buffer.byteLength(exact)).toBeLessThanOrEqual(255);
    },
  );

  it.each([
    ['a link without size', sizelessUpload],
    ['a multipart upload', multipartUpload],
  ])('is kept on %s too, from its record', async (_, upload) => {
    const key = await upload('Q3 "plan" ✓.txt');
    const { claimed, exact, fallback } = await namesOf(key);
    expect(claimed).toEqual({ key, contentType: 'text/plain', size: bytes.length, filename: 'Q3 "plan" ✓.txt' });
    expect(exact).toBe('Q3 "plan" ✓.txt');
    expect(fallback).toBe('Q3 _plan_ _.txt');
  });
});
