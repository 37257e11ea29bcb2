import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type FilesHarness, newCaller, startFiles } from './helpers';
import { askThumbnail, attachedUpload, solidImage } from './thumbnail-helpers';

let h: FilesHarness;
const owner = newCaller();

beforeAll(async () => {
  // One worker, and a wait for it far shorter than a thumbnail's making.
  h = await startFiles(__filename, { THUMB_WORKERS: '1', THUMB_WAIT: '1ms' });
});
afterAll(async () => {
  await h.close();
});

describe('thumbnail workers', () => {
  it('when every worker stays busy past THUMB_WAIT, then 503 with Retry-After, and once one is free the same thumbnail is made', async () => {
    const image = await solidImage(1200, 900, 'jpeg');
    const keys = await Promise.all(
      Array.from({ length: 4 }, (_, i) => attachedUpload(h, owner, image, 'image/jpeg', `p${i}.jpg`)),
    );

    const answers = await Promise.all(keys.map((key) => askThumbnail(h, owner, key, '100x100')));

    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toContain(200);
    expect(statuses).toContain(503);
    const refused = answers.filter((a) => a.status === 503);
    for (const res of refused) {
      expect(res.headers['retry-after']).toBe('2');
      expect(res.body).toEqual({ error: 'Too many thumbnail requests at once; try again shortly' });
    }
    for (const key of keys) expect((await askThumbnail(h, owner, key, '100x100')).status).toBe(200);
  });
});
