/**
 * The contract's upload key: `uploads/<uuid>.<extension>`. The extension is the text after the
 * last dot of the filename, lowercased, when it is 1 to 16 letters or digits; otherwise `bin`.
 * Nothing else of the filename ever enters the key.
 */
import { randomUUID } from 'node:crypto';

const EXTENSION = /^[a-z0-9]{1,16}$/;
export const UPLOAD_KEY = /^uploads\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.[a-z0-9]{1,16}$/;

export function extensionOf(filename: string): string {
  const dot = filename.lastIndexOf('.');
  if (dot === -1) return 'bin';
  const candidate = filename.slice(dot + 1).toLowerCase();
  return EXTENSION.test(candidate) ? candidate : 'bin';
}

export function newUploadKey(filename: string): string {
  return `uploads/${randomUUID()}.${extensionOf(filename)}`;
}

export function isUploadKey(value: unknown): value is string {
  return typeof value === 'string' && UPLOAD_KEY.test(value);
}
