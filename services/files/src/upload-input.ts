import { HttpError } from '@cs/errors';
import { FILENAME_MAX, MAX_PARTS_PER_SIGNING, messages } from './schemas';
import { isUploadKey } from './upload-key';

export interface UploadRequest {
  contentType: string;
  filename: string;
  size: number;
}

export interface UploadRules {
  allowedTypes: readonly string[];
  maxBytes: number;
}

/** `{contentType, filename, size}` → a request the domain can trust, or a 400. */
export function readUploadRequest(
  body: Record<string, unknown>,
  { allowedTypes, maxBytes }: UploadRules,
): UploadRequest {
  const { contentType, filename, size } = body;
  if (typeof contentType !== 'string' || typeof filename !== 'string' || contentType.trim() === '' || filename === '') {
    throw new HttpError(400, messages.contentTypeAndFilenameRequired);
  }
  if (filename.length > FILENAME_MAX) throw new HttpError(400, messages.filenameTooLong);
  const type = contentType.trim().toLowerCase();
  if (!allowedTypes.includes(type)) throw new HttpError(400, messages.typeNotAllowed);
  // Required: signed into the link, so storage takes no other length, and checked at the claim.
  if (!(typeof size === 'number' && Number.isSafeInteger(size) && size > 0 && size <= maxBytes)) {
    throw new HttpError(400, messages.badSize);
  }
  return { contentType: type, filename, size };
}

export function readKey(body: Record<string, unknown>): string {
  if (!isUploadKey(body.key)) throw new HttpError(400, messages.keyRequired);
  return body.key;
}

/** `{partNumbers: [1, 2, …]}`: 1 to 100 positive integers (repeats are signed once). */
export function readPartNumbers(body: Record<string, unknown>): number[] {
  const { partNumbers } = body;
  if (
    !Array.isArray(partNumbers) ||
    partNumbers.length === 0 ||
    partNumbers.length > MAX_PARTS_PER_SIGNING ||
    !partNumbers.every((n) => Number.isSafeInteger(n) && n >= 1)
  ) {
    throw new HttpError(400, messages.badPartNumbers);
  }
  return partNumbers as number[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A multipart upload id from the path; anything that cannot be one is the same 404 as an unknown id. */
export function readUploadId(raw: string): string {
  if (!UUID.test(raw)) throw new HttpError(404, messages.uploadNotFound);
  return raw;
}
