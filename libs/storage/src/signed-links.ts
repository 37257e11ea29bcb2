/**
 * Links that let a client reach storage directly: a PUT of one object, a PUT of one part of a
 * multipart upload, a GET of a download. Signing is computed here, without storage, by the client
 * that only signs (`StorageClients.signer`).
 */
import { GetObjectCommand, PutObjectCommand, UploadPartCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { attachmentDisposition } from './content-disposition';
import type { StorageClients } from './s3-client';
import { storageCall } from './storage-errors';

/** A signed link, and exactly the headers the client must send with it (each is signed in). */
export interface SignedLink {
  url: string;
  headers: Record<string, string>;
}

/** What a download link's answer says about caching, whatever the object was stored with. */
export const DOWNLOAD_CACHE_CONTROL = 'private, no-store';

/**
 * A PUT link for one object. With `size`, the length, `If-None-Match: *` (the link only
 * creates) and the metadata are signed too; without it, only the content type is: any length
 * up to storage's own limit, and the link may be used again while it lasts.
 *
 * With `size`, it is a link for one PUT of exactly this content type, length and metadata, and
 * only while no object is at the key: `If-None-Match: *` is signed in, so the link cannot put the
 * object back over itself or replace it once attached (storage answers 412). The presigner leaves
 * headers unsigned unless told, which would let any type or length through, and it would move the
 * metadata headers into the query string, which not every S3 server reads.
 */
export async function signPut(
  { signer, bucket }: StorageClients,
  key: string,
  {
    contentType,
    size,
    metadata = {},
    expiresIn,
  }: { contentType: string; size?: number; metadata?: Record<string, string>; expiresIn: number },
): Promise<SignedLink> {
  if (size === undefined) {
    const command = new PutObjectCommand({ Bucket: bucket, Key: key, ContentType: contentType });
    const signableHeaders = new Set(['content-type']);
    const url = await storageCall(() => getSignedUrl(signer, command, { expiresIn, signableHeaders }));
    return { url, headers: { 'Content-Type': contentType } };
  }
  const command = new PutObjectCommand({
    Bucket: bucket,
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
  const url = await storageCall(() =>
    getSignedUrl(signer, command, { expiresIn, signableHeaders, unhoistableHeaders }),
  );
  return { url, headers };
}

/** A link for one part of exactly `size` bytes: storage refuses any other length. */
export async function signPart(
  { signer, bucket }: StorageClients,
  key: string,
  uploadId: string,
  { partNumber, size, expiresIn }: { partNumber: number; size: number; expiresIn: number },
): Promise<SignedLink> {
  const command = new UploadPartCommand({
    Bucket: bucket,
    Key: key,
    UploadId: uploadId,
    PartNumber: partNumber,
    ContentLength: size,
  });
  const url = await storageCall(() =>
    getSignedUrl(signer, command, { expiresIn, signableHeaders: new Set(['content-length']) }),
  );
  return { url, headers: { 'Content-Length': String(size) } };
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
export function signGet(
  { signer, bucket }: StorageClients,
  key: string,
  { expiresIn, contentType, filename }: { expiresIn: number; contentType: string; filename: string },
): Promise<string> {
  const command = new GetObjectCommand({
    Bucket: bucket,
    Key: key,
    ResponseContentDisposition: attachmentDisposition(filename),
    ResponseCacheControl: DOWNLOAD_CACHE_CONTROL,
    ResponseContentType: contentType,
    ResponseContentEncoding: 'identity',
    ResponseExpires: new Date(0),
  });
  return storageCall(() => getSignedUrl(signer, command, { expiresIn }));
}
