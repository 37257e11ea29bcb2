import { expect } from '@jest/globals';
import type { Caller, NotesHarness } from './helpers';

/** Through the files service, as a browser would, then attached to a new note of the caller's. */
export async function noteWith(
  on: NotesHarness,
  caller: Caller,
  bytes: Uint8Array | string,
  contentType: string,
  filename: string,
): Promise<{ id: string; key: string }> {
  const res = await fetch(`${on.files.url}/upload-url`, {
    method: 'POST',
    headers: { ...caller.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ contentType, filename, size: Buffer.byteLength(bytes) }),
  });
  const link = (await res.json()) as { url: string; key: string; headers: Record<string, string> };
  expect((await fetch(link.url, { method: 'PUT', headers: link.headers, body: bytes })).ok).toBe(true);
  const note = await on.http.post('/api/notes').set(caller.auth).send({ title: filename, attachmentKey: link.key });
  expect(note.status).toBe(201);
  return { id: note.body._id as string, key: link.key };
}
