/**
 * Where a thumbnail is kept: `thumbs/<key>/<size>`, beside its original's key and outside
 * `uploads/`, so the sweeper's listing of unrecorded uploads never sees one (sweeper.ts).
 */
export const THUMB_KEY_PREFIX = 'thumbs/';

/** Every thumbnail of the upload `key` is under this prefix. */
export function thumbnailsOf(key: string): string {
  return `${THUMB_KEY_PREFIX}${key}/`;
}

export function thumbnailKey(key: string, size: string): string {
  return `${thumbnailsOf(key)}${size}`;
}
