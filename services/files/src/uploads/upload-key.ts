/**
 * The contract's upload key: `uploads/<uuid>.<extension>` (UPLOAD_KEY_PATTERN in `@cs/contract`).
 * The extension is the text after the last dot of the filename, lowercased, when it is 1 to 16
 * letters or digits; otherwise `bin`. Nothing else of the filename ever enters the key.
 */
import { randomUUID } from 'node:crypto';
import { EXTENSION_PATTERN } from '@cs/contract';

const EXTENSION = new RegExp(EXTENSION_PATTERN);

export function extensionOf(filename: string): string {
  const dot = filename.lastIndexOf('.');
  if (dot === -1) return 'bin';
  const candidate = filename.slice(dot + 1).toLowerCase();
  return EXTENSION.test(candidate) ? candidate : 'bin';
}

/** Where every upload's object is kept: the sweeper lists it. */
export const UPLOAD_KEY_PREFIX = 'uploads/';

/** The key of the upload `id` (a UUID: a multipart upload's id in our routes) of `filename`. */
export function uploadKey(id: string, filename: string): string {
  return `${UPLOAD_KEY_PREFIX}${id}.${extensionOf(filename)}`;
}

export function newUploadKey(filename: string): string {
  return uploadKey(randomUUID(), filename);
}
