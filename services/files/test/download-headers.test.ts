/**
 * What a browser sees on a download link is ours, whatever the uploader sent with its PUT. Storage
 * keeps headers that the upload link did not sign (Content-Encoding, Content-Language, Expires,
 * Cache-Control) and would serve them back; the link overrides them.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type FilesHarness, newCaller, startFiles } from './helpers';

let h: FilesHarness;
const owner = newCaller();

beforeAll(async () => {
  h = await startFiles(__filename);
});
afterAll(async () => {
  await h.close();
});

/** A GET that decodes nothing, so the headers and bytes are exactly what storage sent. */
function rawGet(url: string): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

describe('POST /internal/uploads/download-link', () => {
  it('when the upload sent unsigned Content-Encoding, Content-Language, Expires and Cache-Control, then the download has the recorded type, no content encoding and no caching', async () => {
    const bytes = 'plain text, not gzip';
    const link = await h.http
      .post('/upload-url')
      .set(owner.auth)
      .send({ contentType: 'text/plain', filename: 'note.txt', size: Buffer.byteLength(bytes) })
      .expect(200);
    const put = await fetch(link.body.url, {
      method: 'PUT',
      headers: {
        ...link.body.headers,
        'Content-Encoding': 'gzip',
        'Content-Language': 'de',
        Expires: 'Fri, 01 Jan 2100 00:00:00 GMT',
        'Cache-Control': 'public, max-age=31536000',
      },
      body: bytes,
    });
    expect(put.status).toBe(200);
    const { key } = link.body;
    await h.http.post('/internal/uploads/claim').set(owner.auth).send({ key }).expect(200);

    const res = await h.http.post('/internal/uploads/download-link').set(owner.auth).send({ key }).expect(200);
    const download = await rawGet(res.body.url);

    expect(download.status).toBe(200);
    expect(download.body.toString()).toBe(bytes);
    expect(download.headers['content-type']).toBe('text/plain');
    expect([undefined, 'identity']).toContain(download.headers['content-encoding']);
    expect(download.headers['cache-control']).toBe('private, no-store');
    expect(new Date(String(download.headers.expires)).getTime()).toBeLessThanOrEqual(Date.now());
    expect(download.headers['content-disposition']).toBe(`attachment; filename="note.txt"; filename*=UTF-8''note.txt`);
  });
});
