import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import sharp from 'sharp';
import { type NotesHarness, newCaller, startNotes } from './helpers';
import { noteWith } from './note-with-file';

let h: NotesHarness;
const me = newCaller();

beforeAll(async () => {
  // A files service with one thumbnail worker, and a wait for it far shorter than a making.
  h = await startNotes(__filename, { filesEnv: { THUMB_WORKERS: '1', THUMB_WAIT: '1ms' } });
});
afterAll(async () => {
  await h.close();
});

describe('GET /api/notes/:id/attachment?thumb= while files is busy', () => {
  it('when files answers 503 with Retry-After, then so does notes, with files’ message', async () => {
    const image = await sharp({ create: { width: 1600, height: 1200, channels: 3, background: '#208040' } })
      .jpeg()
      .toBuffer();
    const notes = await Promise.all(
      Array.from({ length: 4 }, (_, i) => noteWith(h, me, image, 'image/jpeg', `busy-${i}.jpg`)),
    );

    const answers = await Promise.all(
      notes.map(({ id }) => h.http.get(`/api/notes/${id}/attachment?thumb=800x0`).set(me.auth)),
    );

    expect(answers.map((a) => a.status)).toContain(503);
    for (const res of answers.filter((a) => a.status === 503)) {
      expect(res.headers['retry-after']).toBe('2');
      expect(res.body).toEqual({ error: 'Too many thumbnail requests at once; try again shortly' });
    }
  });
});
