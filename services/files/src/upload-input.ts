import { HttpError } from '@cs/errors';
import { FILENAME_MAX, messages } from './schemas';
import { isUploadKey } from './upload-key';

export interface UploadRequest {
  contentType: string;
  filename: string;
  size: number | undefined;
}

export interface UploadRules {
  allowedTypes: readonly string[];
  maxBytes: number;
}

/** `{contentType, filename, size?}` → a request the domain can trust, or a 400. */
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
  if (size !== undefined && !(typeof size === 'number' && Number.isSafeInteger(size) && size > 0 && size <= maxBytes)) {
    throw new HttpError(400, messages.badSize);
  }
  return { contentType: type, filename, size };
}

export function readKey(body: Record<string, unknown>): string {
  if (!isUploadKey(body.key)) throw new HttpError(400, messages.keyRequired);
  return body.key;
}
