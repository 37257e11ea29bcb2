import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import sharp from 'sharp';
import { thumbnailsMade } from '../src/thumbnails/thumbnails';
import { type FilesHarness, newCaller, startFiles } from './helpers';
import { askThumbnail, attachedUpload, fetchThumbnail, solidImage } from './thumbnail-helpers';

let h: FilesHarness;
const owner = newCaller();
const SIZES = '100x100,100x100t,100x100b,100x100f,0x50,50x0,800x0';
/** Low, so that a bomb is small on disk: a 2000x1000 solid PNG is about 30 kB. */
const MAX_PIXELS = 1_000_000;

beforeAll(async () => {
  h = await startFiles(__filename, { THUMB_SIZES: SIZES, THUMB_MAX_PIXELS: String(MAX_PIXELS) });
});
afterAll(async () => {
  await h.close();
});

/** An image 200 wide and 400 tall: red in its top half, blue in its bottom half. */
async function twoColours(): Promise<Buffer> {
  const half = (background: string) =>
    sharp({ create: { width: 200, height: 200, channels: 3, background } })
      .png()
      .toBuffer();
  return sharp({ create: { width: 200, height: 400, channels: 3, background: '#000000' } })
    .composite([
      { input: await half('#ff0000'), top: 0, left: 0 },
      { input: await half('#0000ff'), top: 200, left: 0 },
    ])
    .png()
    .toBuffer();
}

async function thumbnailOf(key: string, size: string) {
  const res = await askThumbnail(h, owner, key, size);
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ url: expect.any(String), expiresIn: 3600 });
  return fetchThumbnail(res.body.url);
}

async function centreColour(image: Buffer): Promise<string> {
  const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true });
  const at = (Math.floor(info.height / 2) * info.width + Math.floor(info.width / 2)) * info.channels;
  const [r = 0, , b = 0] = data.subarray(at, at + 3);
  return r > 200 && b < 50 ? 'red' : b > 200 && r < 50 ? 'blue' : 'other';
}

describe('POST /internal/uploads/thumbnail-link', () => {
  it('when each size form is asked for, then each thumbnail has the size and the crop its form says, and none is enlarged', async () => {
    const key = await attachedUpload(h, owner, await twoColours(), 'image/png', 'colours.png');
    const expected: Record<string, [number, number, string]> = {
      '100x100': [100, 100, 'other'], // the centre: the border between red and blue
      '100x100t': [100, 100, 'red'],
      '100x100b': [100, 100, 'blue'],
      '100x100f': [50, 100, 'other'],
      '0x50': [25, 50, 'other'],
      '50x0': [50, 100, 'other'],
      '800x0': [200, 400, 'other'],
    };
    for (const [size, [width, height, colour]] of Object.entries(expected)) {
      const thumbnail = await thumbnailOf(key, size);
      const meta = await sharp(thumbnail).metadata();
      expect({ size, width: meta.width, height: meta.height, format: meta.format }).toEqual({
        size,
        width,
        height,
        format: 'png',
      });
      if (colour !== 'other') expect({ size, colour: await centreColour(thumbnail) }).toEqual({ size, colour });
    }
  });

  it('when a JPEG carries GPS and an orientation, then its thumbnail is turned upright and carries no metadata at all', async () => {
    const photo = await sharp({ create: { width: 200, height: 100, channels: 3, background: '#00ff00' } })
      .jpeg()
      .withMetadata({ orientation: 6 })
      .withExifMerge({ IFD0: { Make: 'Test' }, IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 2400/100' } })
      .toBuffer();
    const original = await sharp(photo).metadata();
    expect(original.exif?.toString('latin1')).toContain('Test');
    expect(original.orientation).toBe(6);
    const key = await attachedUpload(h, owner, photo, 'image/jpeg', 'holiday.jpg');

    const thumbnail = await thumbnailOf(key, '800x0');
    const meta = await sharp(thumbnail).metadata();
    expect({ width: meta.width, height: meta.height, format: meta.format }).toEqual({
      width: 100,
      height: 200,
      format: 'jpeg',
    });
    expect({ exif: meta.exif, xmp: meta.xmp, iptc: meta.iptc, icc: meta.icc, orientation: meta.orientation }).toEqual({
      exif: undefined,
      xmp: undefined,
      iptc: undefined,
      icc: undefined,
      orientation: undefined,
    });
    expect(thumbnail.toString('latin1')).not.toContain('Exif');
  });

  it('when the image is animated, then the thumbnail is its first frame', async () => {
    const frame = (background: string) =>
      sharp({ create: { width: 40, height: 20, channels: 3, background } })
        .png()
        .toBuffer();
    const gif = await sharp([await frame('#ff0000'), await frame('#0000ff')], { join: { animated: true } })
      .gif()
      .toBuffer();
    expect((await sharp(gif).metadata()).pages).toBe(2);
    const key = await attachedUpload(h, owner, gif, 'image/gif', 'blink.gif');

    const thumbnail = await thumbnailOf(key, '800x0');
    const meta = await sharp(thumbnail, { pages: -1 }).metadata();
    expect({ format: meta.format, pages: meta.pages ?? 1, width: meta.width, height: meta.height }).toEqual({
      format: 'gif',
      pages: 1,
      width: 40,
      height: 20,
    });
    expect(await centreColour(thumbnail)).toBe('red');
  });

  it('when the image is over THUMB_MAX_PIXELS (a decompression bomb), then 422 and the service goes on making thumbnails', async () => {
    const bomb = await solidImage(2000, 1000, 'png');
    expect(bomb.length).toBeLessThan(50_000);
    const key = await attachedUpload(h, owner, bomb, 'image/png', 'bomb.png');

    const res = await askThumbnail(h, owner, key, '100x100');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: `The image is larger than ${MAX_PIXELS} pixels; no thumbnail is made of it` });

    const fine = await attachedUpload(h, owner, await solidImage(300, 200, 'webp'), 'image/webp', 'fine.webp');
    const meta = await sharp(await thumbnailOf(fine, '100x100')).metadata();
    expect({ width: meta.width, height: meta.height, format: meta.format }).toEqual({
      width: 100,
      height: 100,
      format: 'webp',
    });
  });

  it('when the image is corrupt, then 422 with its reason', async () => {
    const png = await solidImage(300, 200, 'png');
    const corrupt = Buffer.concat([png.subarray(0, 40), Buffer.alloc(200, 7)]);
    const key = await attachedUpload(h, owner, corrupt, 'image/png', 'broken.png');

    const res = await askThumbnail(h, owner, key, '100x100');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: 'The image cannot be read (corrupt or truncated); no thumbnail is made of it' });
  });

  it('when the attachment is not an image, then 400 naming the types thumbnails are made of', async () => {
    const key = await attachedUpload(h, owner, 'just text', 'text/plain', 'notes.txt');
    const res = await askThumbnail(h, owner, key, '100x100');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'Thumbnails are made only of images of type image/png, image/jpeg, image/gif, image/webp',
    });
  });

  it('when the size is not one allowed, then 400 listing the allowed sizes', async () => {
    const key = await attachedUpload(h, owner, await solidImage(20, 20, 'png'), 'image/png', 'small.png');
    for (const size of ['64x64', '100X100', '0x0', 'big']) {
      const res = await askThumbnail(h, owner, key, size);
      expect({ size, status: res.status, body: res.body }).toEqual({
        size,
        status: 400,
        body: { error: `thumb must be one of: ${SIZES.split(',').join(', ')}` },
      });
    }
  });

  it('when the key is not the caller’s, then 404, and nothing is made', async () => {
    const key = await attachedUpload(h, owner, await solidImage(20, 20, 'png'), 'image/png', 'mine.png');
    const res = await askThumbnail(h, newCaller(), key, '100x100');
    expect(res.status).toBe(404);
    expect((await h.bucket.listObjects(`thumbs/${key}/`)).objects).toEqual([]);
  });

  it('when many ask at once for the same missing thumbnail, then it is made once and every one gets its link', async () => {
    const key = await attachedUpload(h, owner, await solidImage(1000, 800, 'jpeg'), 'image/jpeg', 'crowd.jpg');
    // The service's own count, as Prometheus scrapes it.
    const made = async () => (await thumbnailsMade.get()).values[0]?.value ?? 0;
    const before = await made();

    const answers = await Promise.all(Array.from({ length: 8 }, () => askThumbnail(h, owner, key, '50x0')));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(await made()).toBe(before + 1);

    // Asked again later, it is only signed.
    expect((await askThumbnail(h, owner, key, '50x0')).status).toBe(200);
    expect(await made()).toBe(before + 1);
    expect((await h.bucket.listObjects(`thumbs/${key}/`)).objects.map((o) => o.key)).toEqual([`thumbs/${key}/50x0`]);
  });
});
