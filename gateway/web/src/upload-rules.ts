/**
 * What a file must be to be attached, as the server publishes it (`GET /api/upload-rules`): read
 * once per page, used as the file input's `accept` filter, and checked before anything is sent,
 * so that a refused file is explained beside its field in words, with what is allowed.
 */
import { MULTIPART_FROM } from '@content-service/client';
import { api } from './api';
import { formatBytes } from './dom';

export interface UploadRules {
  allowedTypes: string[];
  maxBytes: number;
  maxBytesMultipart: number;
}

const NAMES: Record<string, string> = {
  'image/png': 'PNG',
  'image/jpeg': 'JPEG',
  'image/gif': 'GIF',
  'image/webp': 'WebP',
  'application/pdf': 'PDF',
  'text/plain': 'plain text',
  'application/json': 'JSON',
  'application/zip': 'ZIP',
};

let rules: Promise<UploadRules | undefined> | undefined;

/** The rules, or undefined when they could not be read (the server checks every upload anyway). */
export function uploadRules(): Promise<UploadRules | undefined> {
  rules ??= api.uploadRules().catch(() => {
    rules = undefined;
    return undefined;
  });
  return rules;
}

/** "PNG, JPEG, PDF or plain text". */
function typeList(types: readonly string[]): string {
  const names = types.map((type) => NAMES[type] ?? type);
  return names.length < 2 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

/** Why `file` cannot be attached under `rules`, in words; undefined when it can. */
export function refusal(file: File, { allowedTypes, maxBytes, maxBytesMultipart }: UploadRules): string | undefined {
  if (!allowedTypes.includes(file.type)) {
    const why = file.type ? `${NAMES[file.type] ?? file.type} files are not accepted` : 'its type is unknown';
    return `“${file.name}” cannot be attached: ${why}. You can attach ${typeList(allowedTypes)} files.`;
  }
  const limit = file.size > MULTIPART_FROM ? maxBytesMultipart : maxBytes;
  if (file.size > limit) {
    return `“${file.name}” is ${formatBytes(file.size)}; files can be at most ${formatBytes(limit)}.`;
  }
  return undefined;
}
