import { tellDeleted } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type FilesHarness, newCaller, startFiles } from './helpers';
import { askThumbnail, attachedUpload, solidImage, thumbnailsIn } from './thumbnail-helpers';

let h: FilesHarness;

beforeAll(async () => {
  h = await startFiles(__filename);
});
afterAll(async () => {
  await h.close();
});

/** An attached image with two thumbnails made of it. */
async function imageWithThumbnails(caller = newCaller()) {
  const key = await attachedUpload(h, caller, await solidImage(400, 300, 'png'), 'image/png', 'picture.png');
  for (const size of ['100x100', '300x0']) await askThumbnail(h, caller, key, size).expect(200);
  expect(await thumbnailsIn(h, key)).toEqual([`thumbs/${key}/100x100`, `thumbs/${key}/300x0`]);
  return { caller, key };
}

describe('an upload removed with its thumbnails', () => {
  it('when notes releases the attachment, then its object and every thumbnail of it are gone, and no new one is made', async () => {
    const { caller, key } = await imageWithThumbnails();

    await h.http.post('/internal/uploads/release').set(caller.auth).send({ key }).expect(204);

    expect(await h.bucket.headObject(key)).toBeUndefined();
    expect(await thumbnailsIn(h, key)).toEqual([]);
    expect((await askThumbnail(h, caller, key, '100x100')).status).toBe(404);
    expect(await thumbnailsIn(h, key)).toEqual([]);
  });

  it('when its account is deleted, then its object and every thumbnail of it are gone', async () => {
    const { caller, key } = await imageWithThumbnails();

    await tellDeleted(h.http, caller).expect(204);

    expect(await h.bucket.headObject(key)).toBeUndefined();
    expect(await thumbnailsIn(h, key)).toEqual([]);
  });

  it('when another upload is released, then the thumbnails of this one stay', async () => {
    const { key } = await imageWithThumbnails();
    const other = await imageWithThumbnails();

    await h.http.post('/internal/uploads/release').set(other.caller.auth).send({ key: other.key }).expect(204);

    expect(await thumbnailsIn(h, key)).toHaveLength(2);
  });
});
