/**
 * The thumbnail itself, made with sharp (libvips): decoded only when the image is within
 * `maxPixels` (libvips reads the size from the header first, so a decompression bomb is refused
 * before it is decoded), turned as its EXIF orientation says, resized (thumb-size.ts) and never
 * enlarged, and written in its original's format with no metadata at all: sharp writes none unless
 * told (`withMetadata`, never called here), so no thumbnail carries where a photo was taken. An
 * animated image gives its first frame (sharp reads one page unless told otherwise).
 */
import { HttpError } from '@cs/errors';
import type { ResizeOptions, default as Sharp } from 'sharp';
import { messages } from '../messages';
import type { ThumbSize } from './thumb-size';

/** The content types a thumbnail is made of, and the format each is written back in. */
const FORMATS = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
} as const;

export type ThumbnailType = keyof typeof FORMATS;
export const THUMBNAIL_TYPES = Object.keys(FORMATS) as readonly string[];

let loading: Promise<typeof Sharp> | undefined;

/**
 * sharp, loaded on the first thumbnail: libvips and its codecs add 25 MB to a process that loads
 * them (PSS), which every process that never makes a thumbnail would pay at idle.
 *
 * libvips keeps recent operations and their images in a cache of its own; a thumbnail is made
 * once and stored, so the cache would only hold memory. One thread an image: THUMB_WORKERS images
 * at once then take at most THUMB_WORKERS cores, and the rest of the process keeps its share.
 */
function loadSharp(): Promise<typeof Sharp> {
  loading ??= import('sharp').then(({ default: sharp }) => {
    sharp.cache(false);
    sharp.concurrency(1);
    return sharp;
  });
  return loading;
}

export function isThumbnailType(contentType: string): contentType is ThumbnailType {
  return Object.hasOwn(FORMATS, contentType);
}

/** 422 for an image over `maxPixels`, or one that cannot be read (corrupt, truncated, not what its type says). */
export async function makeThumbnail(
  original: Uint8Array,
  contentType: ThumbnailType,
  size: ThumbSize,
  maxPixels: number,
): Promise<Buffer> {
  const sharp = await loadSharp();
  const resize: ResizeOptions = {
    width: size.width || undefined,
    height: size.height || undefined,
    fit: size.fit === 'inside' ? 'inside' : 'cover',
    position: size.fit === 'inside' ? undefined : size.fit,
    withoutEnlargement: true,
  };
  try {
    return await sharp(original, { limitInputPixels: maxPixels, failOn: 'error' })
      .rotate()
      .resize(resize)
      .toFormat(FORMATS[contentType])
      .toBuffer();
  } catch (err) {
    const bomb = err instanceof Error && /pixel limit/i.test(err.message);
    throw new HttpError(422, bomb ? messages.thumbnailTooLarge(maxPixels) : messages.thumbnailUnreadable, {
      cause: err,
    });
  }
}
