import { HttpError } from '@cs/errors';
import { FILENAME_MAX, MAX_PARTS_PER_SIGNING, messages } from './schemas';
import { isUploadKey } from './upload-key';

export interface UploadRequest {
  contentType: string;
  filename: string;
  /** The exact length, signed into the link; absent in the contract's request (see uploads.ts). */
  size?: number;
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
  // Optional, as in the contract: when given it is signed into the link, so storage takes no other length.
  if (size === undefined) return { contentType: type, filename };
  if (!(typeof size === 'number' && Number.isSafeInteger(size) && size > 0 && size <= maxBytes)) {
    throw new HttpError(400, messages.badSize);
  }
  return { contentType: type, filename, size };
}

/** A multipart upload's request: `size` is required, since the parts are cut from it. */
export function readMultipartRequest(body: Record<string, unknown>, rules: UploadRules): Required<UploadRequest> {
  const request = readUploadRequest(body, rules);
  if (request.size === undefined) throw new HttpError(400, messages.badSize);
  return request as Required<UploadRequest>;
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
