/** Objects: written, read, looked at, listed and deleted by this process (not through a link). */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import type { HttpError } from '@cs/errors';
import type { StorageClients } from './s3-client';
import { mapStorageError, type SdkError, storageCall } from './storage-errors';

export interface ObjectInfo {
  size: number;
  contentType: string | undefined;
  /** The Cache-Control stored with the object, if the uploader sent one. */
  cacheControl?: string;
  /** User metadata (`x-amz-meta-<name>`), by name in lower case. */
  metadata: Record<string, string>;
  lastModified: Date;
}

/** An object as a listing shows it. */
export interface ListedObject {
  key: string;
  size: number;
  lastModified: Date;
}

export function putObject(
  { s3, bucket }: StorageClients,
  key: string,
  body: Uint8Array | string,
  contentType: string,
  metadata?: Record<string, string>,
): Promise<string> {
  return storageCall(async () => {
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        Body: body,
        ContentType: contentType,
        Metadata: metadata,
      }),
    );
    return key;
  });
}

/** Reads the whole object; the body stream is always consumed. */
export function getObject({ s3, bucket }: StorageClients, key: string): Promise<Buffer> {
  return storageCall(async () => {
    const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    if (!out.Body) return Buffer.alloc(0);
    return Buffer.from(await out.Body.transformToByteArray());
  });
}

/**
 * Undefined when there is no object at the key. A HEAD answer has no body, so a missing bucket
 * looks like a missing key; the bucket is checked before saying "no object".
 */
export function headObject({ s3, bucket }: StorageClients, key: string): Promise<ObjectInfo | undefined> {
  return storageCall(async () => {
    try {
      const out = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return {
        size: out.ContentLength ?? 0,
        contentType: out.ContentType,
        cacheControl: out.CacheControl,
        metadata: out.Metadata ?? {},
        lastModified: out.LastModified ?? new Date(0),
      };
    } catch (err) {
      if (mapStorageError(err).status !== 404) throw err;
      await s3.send(new HeadBucketCommand({ Bucket: bucket })).catch((bucketErr: unknown) => {
        const { name, $metadata } = bucketErr as SdkError;
        if (name === 'NotFound' || $metadata?.httpStatusCode === 404) {
          throw Object.assign(new Error(`NoSuchBucket: ${bucket}`), { name: 'NoSuchBucket', cause: bucketErr });
        }
        throw bucketErr;
      });
      return undefined;
    }
  });
}

/**
 * Idempotent, as S3 defines it: an object already gone is deleted. Some S3 servers (versitygw)
 * answer NoSuchKey instead, which an SDK retry of a delete that did succeed also meets.
 */
export async function deleteObject({ s3, bucket }: StorageClients, key: string): Promise<void> {
  try {
    await storageCall(() => s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })));
  } catch (err) {
    if ((err as HttpError).status !== 404) throw err;
  }
}

/** Up to `max` objects under `prefix`, in key order after `after`; `next` continues, when there is more. */
export function listObjects(
  { s3, bucket }: StorageClients,
  prefix: string,
  { after, max = 1000 }: { after?: string; max?: number } = {},
) {
  return storageCall(async () => {
    const out = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, StartAfter: after, MaxKeys: max }),
    );
    const objects: ListedObject[] = (out.Contents ?? []).map((o) => ({
      key: o.Key ?? '',
      size: o.Size ?? 0,
      lastModified: o.LastModified ?? new Date(0),
    }));
    return { objects, next: out.IsTruncated ? objects.at(-1)?.key : undefined };
  });
}
