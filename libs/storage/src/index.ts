/**
 * The S3 wrapper: the only code that talks to object storage. Every call maps storage errors to
 * HttpErrors (NoSuchKey → 404; credentials or bucket problems → 500 with a generic message and the
 * cause in the log; storage unreachable → 503).
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutBucketCorsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { HttpError, isUnavailable } from '@cs/errors';
import { counter, histogram, metricsEnabled, startCallSpan, tracingOn } from '@cs/telemetry';
import { attachmentDisposition } from './content-disposition';

export { attachmentDisposition };

export interface StorageSettings {
  /** Where this process reaches storage. */
  endpoint: string;
  /** Where browsers reach storage; signed links use it. Defaults to `endpoint`. */
  publicEndpoint?: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Per-attempt timeout of a storage call, so a stalled server gives a 503, never a hang. */
  requestTimeoutMs?: number;
}

/** A part of a multipart upload, as storage lists it. */
export interface StoredPart {
  partNumber: number;
  size: number;
  etag: string;
}

/** A signed link, and exactly the headers the client must send with it (each is signed in). */
export interface SignedLink {
  url: string;
  headers: Record<string, string>;
}

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

const NOT_FOUND = new Set(['NoSuchKey', 'NotFound']);
/** What storage answers for a multipart upload id it does not hold (never created, completed or aborted). */
const NO_SUCH_UPLOAD = 'NoSuchUpload';
/** What a download link's answer says about caching, whatever the object was stored with. */
export const DOWNLOAD_CACHE_CONTROL = 'private, no-store';
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

interface SdkError {
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

/** An error's kind, for the storage metrics: a few kinds an operator can act on. */
function errorKind(err: unknown): string {
  const { name } = (err ?? {}) as SdkError;
  if (name && NOT_FOUND.has(name)) return 'not_found';
  if (name === NO_SUCH_UPLOAD) return 'no_such_upload';
  const mapped = mapStorageError(err);
  if (mapped.status === 503) return 'unavailable';
  return name && MISCONFIGURED.has(name) ? 'misconfigured' : 'failed';
}

/**
 * Observes every call the client sends, retries included: with metrics on, its duration into
 * `storage_operation_duration_seconds` and a failure by kind into `storage_errors_total`; with
 * tracing on, a span (`S3.HeadObject`) under the request that asked. Links are signed by a client
 * of their own, so nothing here sees a presigning (it sends nothing).
 */
function observe(s3: S3Client, bucket: string): void {
  if (!metricsEnabled() && !tracingOn()) return;
  const metrics = metricsEnabled()
    ? {
        duration: histogram(
          'storage_operation_duration_seconds',
          'Object storage calls, retries included, by operation and outcome.',
          ['operation', 'outcome'],
        ),
        errors: counter('storage_errors_total', 'Object storage calls that failed, by operation and kind.', [
          'operation',
          'kind',
        ]),
      }
    : undefined;
  s3.middlewareStack.add(
    (next, context) => async (args) => {
      const operation = (context.commandName ?? 'unknown').replace(/Command$/, '');
      const span = startCallSpan(`S3.${operation}`, () => ({
        'rpc.system': 'aws-api',
        'rpc.service': 'S3',
        'rpc.method': operation,
        'aws.s3.bucket': bucket,
      }));
      const started = process.hrtime.bigint();
      const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
      try {
        const result = await next(args);
        span?.end();
        metrics?.duration.observe({ operation, outcome: 'ok' }, seconds());
        return result;
      } catch (err) {
        span?.end(err);
        metrics?.duration.observe({ operation, outcome: 'error' }, seconds());
        metrics?.errors.inc({ operation, kind: errorKind(err) });
        throw err;
      }
    },
    { step: 'initialize', name: 'storageObservability' },
  );
}

function client(settings: StorageSettings, endpoint: string): S3Client {
  return new S3Client({
    endpoint,
    region: settings.region,
    forcePathStyle: true,
    credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
    // Otherwise the presigner signs a checksum of an empty body into upload links.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 2,
    requestHandler: { connectionTimeout: 1000, requestTimeout: settings.requestTimeoutMs ?? 5000 },
  });
}

export class ObjectStorage {
  readonly bucket: string;
  private readonly s3: S3Client;
  /** Signs links and sends nothing: a client of its own, so the observed stack of `s3` never sees a presigning. */
  private readonly signer: S3Client;
  /** The last reachability probe (see assertReachable): when it started, and its error if any. */
  private probe: { at: number; outcome: Promise<unknown> } | undefined;

  constructor(settings: StorageSettings) {
    this.bucket = settings.bucket;
    this.s3 = client(settings, settings.endpoint);
    observe(this.s3, this.bucket);
    this.signer = client(settings, settings.publicEndpoint || settings.endpoint);
  }

  private async call<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (err) {
      throw mapStorageError(err);
    }
  }

  putObject(
    key: string,
    body: Uint8Array | string,
    contentType: string,
    metadata?: Record<string, string>,
  ): Promise<string> {
    return this.call(async () => {
      await this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
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
  getObject(key: string): Promise<Buffer> {
    return this.call(async () => {
      const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!out.Body) return Buffer.alloc(0);
      return Buffer.from(await out.Body.transformToByteArray());
    });
  }

  /**
   * Undefined when there is no object at the key. A HEAD answer has no body, so a missing bucket
   * looks like a missing key; the bucket is checked before saying "no object".
   */
  headObject(key: string): Promise<ObjectInfo | undefined> {
    return this.call(async () => {
      try {
        const out = await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
        return {
          size: out.ContentLength ?? 0,
          contentType: out.ContentType,
          cacheControl: out.CacheControl,
          metadata: out.Metadata ?? {},
          lastModified: out.LastModified ?? new Date(0),
        };
      } catch (err) {
        if (mapStorageError(err).status !== 404) throw err;
        await this.s3.send(new HeadBucketCommand({ Bucket: this.bucket })).catch((bucketErr: unknown) => {
          const { name, $metadata } = bucketErr as SdkError;
          if (name === 'NotFound' || $metadata?.httpStatusCode === 404) {
            throw Object.assign(new Error(`NoSuchBucket: ${this.bucket}`), { name: 'NoSuchBucket', cause: bucketErr });
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
  async deleteObject(key: string): Promise<void> {
    try {
      await this.call(() => this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key })));
    } catch (err) {
      if ((err as HttpError).status !== 404) throw err;
    }
  }

  /**
   * A link for one PUT of exactly this content type, length and metadata, and only while no
   * object is at the key: `If-None-Match: *` is signed in, so the link cannot put the object back
   * over itself or replace it once attached (storage answers 412). The presigner leaves headers
   * unsigned unless told, which would let any type or length through, and it would move the
   * metadata headers into the query string, which not every S3 server reads.
   */
  /**
   * A PUT link for one object. With `size`, the length, `If-None-Match: *` (the link only
   * creates) and the metadata are signed too; without it, only the content type is: any length
   * up to storage's own limit, and the link may be used again while it lasts.
   */
  async signPut(
    key: string,
    {
      contentType,
      size,
      metadata = {},
      expiresIn,
    }: { contentType: string; size?: number; metadata?: Record<string, string>; expiresIn: number },
  ): Promise<SignedLink> {
    if (size === undefined) {
      const command = new PutObjectCommand({ Bucket: this.bucket, Key: key, ContentType: contentType });
      const signableHeaders = new Set(['content-type']);
      const url = await this.call(() => getSignedUrl(this.signer, command, { expiresIn, signableHeaders }));
      return { url, headers: { 'Content-Type': contentType } };
    }
    const command = new PutObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ContentType: contentType,
      ContentLength: size,
      IfNoneMatch: '*',
      Metadata: metadata,
    });
    const metadataHeaders = Object.fromEntries(
      Object.entries(metadata).map(([name, value]) => [`x-amz-meta-${name.toLowerCase()}`, value]),
    );
    const headers = {
      'Content-Type': contentType,
      'Content-Length': String(size),
      'If-None-Match': '*',
      ...metadataHeaders,
    };
    const signableHeaders = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
    const unhoistableHeaders = new Set(Object.keys(metadataHeaders));
    const url = await this.call(() =>
      getSignedUrl(this.signer, command, { expiresIn, signableHeaders, unhoistableHeaders }),
    );
    return { url, headers };
  }

  /** Up to `max` objects under `prefix`, in key order after `after`; `next` continues, when there is more. */
  listObjects(prefix: string, { after, max = 1000 }: { after?: string; max?: number } = {}) {
    return this.call(async () => {
      const out = await this.s3.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, StartAfter: after, MaxKeys: max }),
      );
      const objects: ListedObject[] = (out.Contents ?? []).map((o) => ({
        key: o.Key ?? '',
        size: o.Size ?? 0,
        lastModified: o.LastModified ?? new Date(0),
      }));
      return { objects, next: out.IsTruncated ? objects.at(-1)?.key : undefined };
    });
  }

  /** Starts a multipart upload of an object of this content type; gives storage's upload id. */
  createMultipartUpload(key: string, contentType: string): Promise<string> {
    return this.call(async () => {
      const out = await this.s3.send(
        new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ContentType: contentType }),
      );
      if (!out.UploadId) throw new Error('storage answered CreateMultipartUpload without an UploadId');
      return out.UploadId;
    });
  }

  /** A link for one part of exactly `size` bytes: storage refuses any other length. */
  async signPart(
    key: string,
    uploadId: string,
    { partNumber, size, expiresIn }: { partNumber: number; size: number; expiresIn: number },
  ): Promise<SignedLink> {
    const command = new UploadPartCommand({
      Bucket: this.bucket,
      Key: key,
      UploadId: uploadId,
      PartNumber: partNumber,
      ContentLength: size,
    });
    const url = await this.call(() =>
      getSignedUrl(this.signer, command, { expiresIn, signableHeaders: new Set(['content-length']) }),
    );
    return { url, headers: { 'Content-Length': String(size) } };
  }

  /** Every part storage holds for the upload, in order; undefined when storage holds no such upload. */
  listParts(key: string, uploadId: string): Promise<StoredPart[] | undefined> {
    return this.call(async () => {
      const parts: StoredPart[] = [];
      let marker: string | undefined;
      try {
        do {
          const out = await this.s3.send(
            new ListPartsCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, PartNumberMarker: marker }),
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
  completeMultipartUpload(key: string, uploadId: string, parts: readonly StoredPart[]): Promise<boolean> {
    return this.call(async () => {
      try {
        await this.s3.send(
          new CompleteMultipartUploadCommand({
            Bucket: this.bucket,
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
  listMultipartUploads(prefix: string): Promise<{ key: string; uploadId: string }[]> {
    return this.call(async () => {
      const out = await this.s3.send(new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: prefix }));
      return (out.Uploads ?? []).map((u) => ({ key: u.Key ?? '', uploadId: u.UploadId ?? '' }));
    });
  }

  /** Idempotent: an upload already completed or aborted is nothing to abort. */
  abortMultipartUpload(key: string, uploadId: string): Promise<void> {
    return this.call(async () => {
      try {
        await this.s3.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId }));
      } catch (err) {
        if ((err as SdkError).name !== NO_SUCH_UPLOAD) throw err;
      }
    });
  }

  /**
   * A download link. Storage answers it with `Content-Disposition: attachment`, so a browser
   * saves the file instead of rendering it on storage's origin (an uploaded HTML or SVG file
   * never runs as a page), under `filename`: the uploader's name for it, made safe by the caller and
   * encoded for the header by content-disposition.ts.
   * `Cache-Control` is ours too: an uploader may have stored one with the object (a year of
   * public caching, say), and a private file must stay out of shared caches.
   *
   * Storage keeps the headers an upload sent without signing them, and serves them back; so every
   * header that changes how a browser reads the bytes is set here: the `contentType` we recorded,
   * `Content-Encoding: identity` (an uploader's `gzip` would make the browser decode what it
   * saves), and an `Expires` in the past beside `no-store`. `Content-Language` is only a hint and
   * can be replaced but not removed, so it is left as stored.
   */
  signGet(
    key: string,
    { expiresIn, contentType, filename }: { expiresIn: number; contentType: string; filename: string },
  ): Promise<string> {
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ResponseContentDisposition: attachmentDisposition(filename),
      ResponseCacheControl: DOWNLOAD_CACHE_CONTROL,
      ResponseContentType: contentType,
      ResponseContentEncoding: 'identity',
      ResponseExpires: new Date(0),
    });
    return this.call(() => getSignedUrl(this.signer, command, { expiresIn }));
  }

  /**
   * Throws the 503 (or, for a missing bucket or refused credentials, the 500) that a real call
   * would, when storage did not answer a HEAD of the bucket. Signing a link is computed here,
   * without storage, so without this check a link would be handed out that cannot work. One
   * probe serves every caller for `maxAgeMs`; concurrent callers share a probe in flight.
   */
  async assertReachable(maxAgeMs = 1000): Promise<void> {
    const now = Date.now();
    if (!this.probe || now - this.probe.at > maxAgeMs) {
      const outcome = this.call(() => this.s3.send(new HeadBucketCommand({ Bucket: this.bucket }))).then(
        () => undefined,
        // A HEAD has no body: a missing bucket comes back as a bare 404, which is NoSuchBucket.
        (err: HttpError) =>
          err.status === 404 ? new HttpError(500, storageMessages.failed, { cause: err, expose: true }) : err,
      );
      this.probe = { at: now, outcome };
    }
    const failure = await this.probe.outcome;
    if (failure) throw failure;
  }

  /** Readiness: the bucket exists and our credentials reach it. */
  async bucketReady(): Promise<boolean> {
    await this.s3.send(new HeadBucketCommand({ Bucket: this.bucket }));
    return true;
  }

  /** Creates the bucket when missing and sets the CORS rule browsers need for direct uploads. */
  async ensureBucket(corsOrigins: readonly string[]): Promise<void> {
    try {
      await this.s3.send(new CreateBucketCommand({ Bucket: this.bucket }));
    } catch (err) {
      const name = (err as SdkError).name;
      if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw err;
    }
    if (corsOrigins.length === 0) return;
    await this.s3.send(
      new PutBucketCorsCommand({
        Bucket: this.bucket,
        CORSConfiguration: {
          CORSRules: [
            {
              AllowedOrigins: [...corsOrigins],
              AllowedMethods: ['PUT', 'GET', 'HEAD'],
              AllowedHeaders: ['content-type', 'content-length', 'if-none-match', 'x-amz-meta-*'],
              ExposeHeaders: ['ETag'],
              MaxAgeSeconds: 600,
            },
          ],
        },
      }),
    );
  }

  destroy(): void {
    this.s3.destroy();
    this.signer.destroy();
  }
}
