/**
 * What storage's failures mean to our callers. Every call maps storage errors to HttpErrors
 * (NoSuchKey → 404; credentials or bucket problems → 500 with a generic message and the cause in
 * the log; storage unreachable → 503).
 */
import { HttpError, isUnavailable } from '@cs/errors';

const NOT_FOUND = new Set(['NoSuchKey', 'NotFound']);
/** What storage answers for a multipart upload id it does not hold (never created, completed or aborted). */
export const NO_SUCH_UPLOAD = 'NoSuchUpload';
const MISCONFIGURED = new Set([
  'NoSuchBucket',
  'AccessDenied',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'XAdminUserNotFound',
  'InvalidBucketName',
]);

export const storageMessages = {
  notFound: 'File not found',
  failed: 'Storage operation failed',
  unavailable: 'Storage temporarily unavailable',
} as const;

export interface SdkError {
  name?: string;
  $metadata?: { httpStatusCode?: number };
}

/** Maps a storage SDK error to an HttpError carrying the original as its cause. */
export function mapStorageError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  const { name, $metadata } = (err ?? {}) as SdkError;
  const status = $metadata?.httpStatusCode;
  if (name && NOT_FOUND.has(name)) return new HttpError(404, storageMessages.notFound, { cause: err });
  if ((name && MISCONFIGURED.has(name)) || status === 403 || status === 401) {
    return new HttpError(500, storageMessages.failed, { cause: err, expose: true });
  }
  if (
    status === undefined ||
    status === 503 ||
    isUnavailable(err) ||
    name === 'TimeoutError' ||
    name === 'RequestTimeout'
  ) {
    return new HttpError(503, storageMessages.unavailable, { cause: err, expose: true });
  }
  return new HttpError(500, storageMessages.failed, { cause: err, expose: true });
}

/** Runs one storage operation; whatever it throws comes out mapped (mapStorageError). */
export async function storageCall<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (err) {
    throw mapStorageError(err);
  }
}

/** An error's kind, for the storage metrics: a few kinds an operator can act on. */
export function errorKind(err: unknown): string {
  const { name } = (err ?? {}) as SdkError;
  if (name && NOT_FOUND.has(name)) return 'not_found';
  if (name === NO_SUCH_UPLOAD) return 'no_such_upload';
  const mapped = mapStorageError(err);
  if (mapped.status === 503) return 'unavailable';
  return name && MISCONFIGURED.has(name) ? 'misconfigured' : 'failed';
}
