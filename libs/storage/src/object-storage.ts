/**
 * The S3 wrapper: the only code that talks to object storage. Every call maps storage errors to
 * HttpErrors (storage-errors.ts). Each group of operations is a module of its own, working with
 * the clients this object holds: objects.ts, signed-links.ts, multipart.ts, bucket.ts.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { bucketReady, ensureBucket, reachabilityCheck } from './bucket';
import {
  abortMultipartUpload,
  completeMultipartUpload,
  createMultipartUpload,
  listMultipartUploads,
  listParts,
  type StoredPart,
} from './multipart';
import { deleteObject, getObject, headObject, listObjects, type ObjectInfo, putObject } from './objects';
import { createS3Client, type StorageClients, type StorageSettings } from './s3-client';
import { type SignedLink, signGet, signPart, signPut } from './signed-links';
import { observe } from './storage-observability';

export class ObjectStorage {
  readonly bucket: string;
  private readonly s3: S3Client;
  /** Signs links and sends nothing: a client of its own, so the observed stack of `s3` never sees a presigning. */
  private readonly signer: S3Client;
  private readonly clients: StorageClients;
  /** Probes the bucket, sharing one probe for a while (see assertReachable). */
  private readonly reachable: (maxAgeMs: number) => Promise<void>;

  constructor(settings: StorageSettings) {
    this.bucket = settings.bucket;
    this.s3 = createS3Client(settings, settings.endpoint);
    observe(this.s3, this.bucket);
    this.signer = createS3Client(settings, settings.publicEndpoint || settings.endpoint);
    this.clients = { bucket: this.bucket, s3: this.s3, signer: this.signer };
    this.reachable = reachabilityCheck(this.clients);
  }

  putObject(
    key: string,
    body: Uint8Array | string,
    contentType: string,
    metadata?: Record<string, string>,
  ): Promise<string> {
    return putObject(this.clients, key, body, contentType, metadata);
  }

  /** Reads the whole object; the body stream is always consumed. */
  getObject(key: string): Promise<Buffer> {
    return getObject(this.clients, key);
  }

  /** Undefined when there is no object at the key (and the bucket is there). */
  headObject(key: string): Promise<ObjectInfo | undefined> {
    return headObject(this.clients, key);
  }

  /** Idempotent, as S3 defines it: an object already gone is deleted. */
  deleteObject(key: string): Promise<void> {
    return deleteObject(this.clients, key);
  }

  /**
   * A PUT link for one object. With `size`, the length, `If-None-Match: *` (the link only
   * creates) and the metadata are signed too; without it, only the content type is.
   */
  signPut(
    key: string,
    options: { contentType: string; size?: number; metadata?: Record<string, string>; expiresIn: number },
  ): Promise<SignedLink> {
    return signPut(this.clients, key, options);
  }

  /** Up to `max` objects under `prefix`, in key order after `after`; `next` continues, when there is more. */
  listObjects(prefix: string, options: { after?: string; max?: number } = {}) {
    return listObjects(this.clients, prefix, options);
  }

  /** Starts a multipart upload of an object of this content type; gives storage's upload id. */
  createMultipartUpload(key: string, contentType: string): Promise<string> {
    return createMultipartUpload(this.clients, key, contentType);
  }

  /** A link for one part of exactly `size` bytes: storage refuses any other length. */
  signPart(
    key: string,
    uploadId: string,
    options: { partNumber: number; size: number; expiresIn: number },
  ): Promise<SignedLink> {
    return signPart(this.clients, key, uploadId, options);
  }

  /** Every part storage holds for the upload, in order; undefined when storage holds no such upload. */
  listParts(key: string, uploadId: string): Promise<StoredPart[] | undefined> {
    return listParts(this.clients, key, uploadId);
  }

  /** Joins the parts into the object; false when storage holds no such upload (any more). */
  completeMultipartUpload(key: string, uploadId: string, parts: readonly StoredPart[]): Promise<boolean> {
    return completeMultipartUpload(this.clients, key, uploadId, parts);
  }

  /** Multipart uploads storage holds open under a key prefix (the first thousand). */
  listMultipartUploads(prefix: string): Promise<{ key: string; uploadId: string }[]> {
    return listMultipartUploads(this.clients, prefix);
  }

  /** Idempotent: an upload already completed or aborted is nothing to abort. */
  abortMultipartUpload(key: string, uploadId: string): Promise<void> {
    return abortMultipartUpload(this.clients, key, uploadId);
  }

  /**
   * A download link, answered with `Content-Disposition: attachment` under `filename`, and with
   * our `Cache-Control`, `Content-Type` and `Content-Encoding` whatever the upload stored.
   */
  signGet(key: string, options: { expiresIn: number; contentType: string; filename: string }): Promise<string> {
    return signGet(this.clients, key, options);
  }

  /**
   * Throws the 503 (or, for a missing bucket or refused credentials, the 500) that a real call
   * would, when storage did not answer a HEAD of the bucket. One probe serves every caller for
   * `maxAgeMs`; concurrent callers share a probe in flight.
   */
  assertReachable(maxAgeMs = 1000): Promise<void> {
    return this.reachable(maxAgeMs);
  }

  /** Readiness: the bucket exists and our credentials reach it. */
  bucketReady(): Promise<boolean> {
    return bucketReady(this.clients);
  }

  /** Creates the bucket when missing and sets the CORS rule browsers need for direct uploads. */
  ensureBucket(corsOrigins: readonly string[]): Promise<void> {
    return ensureBucket(this.clients, corsOrigins);
  }

  destroy(): void {
    this.s3.destroy();
    this.signer.destroy();
  }
}
