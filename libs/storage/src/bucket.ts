/** The bucket itself: whether storage reaches it now, whether it is ready, and its creation. */
import { CreateBucketCommand, HeadBucketCommand, PutBucketCorsCommand } from '@aws-sdk/client-s3';
import { HttpError } from '@cs/errors';
import type { StorageClients } from './s3-client';
import { type SdkError, storageCall, storageMessages } from './storage-errors';

/**
 * Throws the 503 (or, for a missing bucket or refused credentials, the 500) that a real call
 * would, when storage did not answer a HEAD of the bucket. Signing a link is computed here,
 * without storage, so without this check a link would be handed out that cannot work. One
 * probe serves every caller for `maxAgeMs`; concurrent callers share a probe in flight.
 */
export function reachabilityCheck({ s3, bucket }: StorageClients): (maxAgeMs: number) => Promise<void> {
  /** The last reachability probe: when it started, and its error if any. */
  let probe: { at: number; outcome: Promise<unknown> } | undefined;
  return async (maxAgeMs) => {
    const now = Date.now();
    if (!probe || now - probe.at > maxAgeMs) {
      const outcome = storageCall(() => s3.send(new HeadBucketCommand({ Bucket: bucket }))).then(
        () => undefined,
        // A HEAD has no body: a missing bucket comes back as a bare 404, which is NoSuchBucket.
        (err: HttpError) =>
          err.status === 404 ? new HttpError(500, storageMessages.failed, { cause: err, expose: true }) : err,
      );
      probe = { at: now, outcome };
    }
    const failure = await probe.outcome;
    if (failure) throw failure;
  };
}

/** Readiness: the bucket exists and our credentials reach it. */
export async function bucketReady({ s3, bucket }: StorageClients): Promise<boolean> {
  await s3.send(new HeadBucketCommand({ Bucket: bucket }));
  return true;
}

/** Creates the bucket when missing and sets the CORS rule browsers need for direct uploads. */
export async function ensureBucket({ s3, bucket }: StorageClients, corsOrigins: readonly string[]): Promise<void> {
  try {
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (err) {
    const name = (err as SdkError).name;
    if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw err;
  }
  if (corsOrigins.length === 0) return;
  await s3.send(
    new PutBucketCorsCommand({
      Bucket: bucket,
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
