/**
 * Multipart uploads, as storage holds them: started, their parts listed, joined into the object,
 * found open, and aborted. The links a client sends each part with are signed in signed-links.ts.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
} from '@aws-sdk/client-s3';
import type { StorageClients } from './s3-client';
import { NO_SUCH_UPLOAD, type SdkError, storageCall } from './storage-errors';

/** A part of a multipart upload, as storage lists it. */
export interface StoredPart {
  partNumber: number;
  size: number;
  etag: string;
}

/** Starts a multipart upload of an object of this content type; gives storage's upload id. */
export function createMultipartUpload(
  { s3, bucket }: StorageClients,
  key: string,
  contentType: string,
): Promise<string> {
  return storageCall(async () => {
    const out = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: contentType }));
    if (!out.UploadId) throw new Error('storage answered CreateMultipartUpload without an UploadId');
    return out.UploadId;
  });
}

/** Every part storage holds for the upload, in order; undefined when storage holds no such upload. */
export function listParts(
  { s3, bucket }: StorageClients,
  key: string,
  uploadId: string,
): Promise<StoredPart[] | undefined> {
  return storageCall(async () => {
    const parts: StoredPart[] = [];
    let marker: string | undefined;
    try {
      do {
        const out = await s3.send(
          new ListPartsCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumberMarker: marker }),
        );
        for (const part of out.Parts ?? []) {
          parts.push({ partNumber: part.PartNumber ?? 0, size: part.Size ?? 0, etag: part.ETag ?? '' });
        }
        marker = out.IsTruncated ? out.NextPartNumberMarker : undefined;
      } while (marker);
    } catch (err) {
      if ((err as SdkError).name === NO_SUCH_UPLOAD) return undefined;
      throw err;
    }
    return parts;
  });
}

/** Joins the parts into the object; false when storage holds no such upload (any more). */
export function completeMultipartUpload(
  { s3, bucket }: StorageClients,
  key: string,
  uploadId: string,
  parts: readonly StoredPart[],
): Promise<boolean> {
  return storageCall(async () => {
    try {
      await s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: key,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.partNumber, ETag: p.etag })) },
        }),
      );
      return true;
    } catch (err) {
      if ((err as SdkError).name === NO_SUCH_UPLOAD) return false;
      throw err;
    }
  });
}

/** Multipart uploads storage holds open under a key prefix (the first thousand). */
export function listMultipartUploads(
  { s3, bucket }: StorageClients,
  prefix: string,
): Promise<{ key: string; uploadId: string }[]> {
  return storageCall(async () => {
    const out = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }));
    return (out.Uploads ?? []).map((u) => ({ key: u.Key ?? '', uploadId: u.UploadId ?? '' }));
  });
}

/** Idempotent: an upload already completed or aborted is nothing to abort. */
export function abortMultipartUpload({ s3, bucket }: StorageClients, key: string, uploadId: string): Promise<void> {
  return storageCall(async () => {
    try {
      await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }));
    } catch (err) {
      if ((err as SdkError).name !== NO_SUCH_UPLOAD) throw err;
    }
  });
}
