import sharp from 'sharp';
import { type Caller, type FilesHarness, uploadFile } from './helpers';

/** A solid image of `width` x `height` in `format`. */
export function solidImage(width: number, height: number, format: 'png' | 'jpeg' | 'webp', background = '#3080c0') {
  return sharp({ create: { width, height, channels: 3, background } })
    .toFormat(format)
    .toBuffer();
}

/** Uploads `bytes` as `contentType` and attaches it, as notes does for a note: a key a thumbnail can be asked of. */
export async function attachedUpload(
  h: FilesHarness,
  caller: Caller,
  bytes: Uint8Array | string,
  contentType: string,
  filename = 'photo',
): Promise<string> {
  const key = await uploadFile(h, caller, bytes, contentType, filename);
  await h.http.post('/internal/uploads/claim').set(caller.auth).send({ key }).expect(200);
  return key;
}

export function askThumbnail(h: FilesHarness, caller: Caller, key: string, size: string) {
  return h.http.post('/internal/uploads/thumbnail-link').set(caller.auth).send({ key, size });
}

/** The thumbnail behind a link, as a browser gets it. */
export async function fetchThumbnail(url: string): Promise<Buffer> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`storage answered ${res.status} for the thumbnail`);
  return Buffer.from(await res.arrayBuffer());
}

/** The thumbnails under an upload's key, as the bucket lists them. */
export async function thumbnailsIn(h: FilesHarness, key: string): Promise<string[]> {
  const { objects } = await h.bucket.listObjects(`thumbs/${key}/`);
  return objects.map((o) => o.key);
}
