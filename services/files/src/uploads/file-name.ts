/**
 * The name a file is downloaded under: what the uploader called it, made safe to keep, to show
 * and to send back in a header. Only the name's last path segment is kept; controls (CR, LF, NUL
 * and the rest), bidirectional overrides (which make `txt.exe` read `exe.txt`) and line separators
 * go; leading dots go (no `..`, no hidden file); and it is cut to 255 bytes of UTF-8, what file
 * systems take, between whole characters and keeping its extension. A name with nothing left is
 * `file`. The key is never made from it (upload-key.ts): the name is shown, never used.
 */
const MAX_BYTES = 255;
const UNSAFE = /[\p{Cc}\p{Zl}\p{Zp}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;
/** What is kept whole when a long name is cut: its last dot and up to 16 characters after it. */
const EXTENSION = /\.[^.]{1,16}$/u;
const characters = new Intl.Segmenter('en', { granularity: 'grapheme' });

function cut(stem: string, bytes: number): string {
  let kept = '';
  for (const { segment } of characters.segment(stem)) {
    if (Buffer.byteLength(kept + segment) > bytes) break;
    kept += segment;
  }
  return kept;
}

export function displayFilename(filename: string): string {
  const segments = filename.normalize('NFC').replace(UNSAFE, '').split(/[/\\]/);
  const name = (segments.at(-1) ?? '').trim().replace(/^\.+/, '').trim();
  if (name === '') return 'file';
  if (Buffer.byteLength(name) <= MAX_BYTES) return name;
  const extension = EXTENSION.exec(name)?.[0] ?? '';
  return cut(name.slice(0, name.length - extension.length), MAX_BYTES - extension.length) + extension;
}

/** The name as S3 user metadata takes it (ASCII only): percent-encoded. */
export function encodeFilename(name: string): string {
  return encodeURIComponent(name);
}

/** The name back from its metadata; undefined when it is absent or not one of ours. */
export function decodeFilename(encoded: string | undefined): string | undefined {
  if (encoded === undefined) return undefined;
  try {
    return displayFilename(decodeURIComponent(encoded));
  } catch {
    return undefined;
  }
}

/** The name a record's file is downloaded under: the key's last segment for one recorded before names were kept. */
export function filenameOf(record: { key: string; filename?: string | null }): string {
  return record.filename ?? record.key.slice(record.key.lastIndexOf('/') + 1);
}
