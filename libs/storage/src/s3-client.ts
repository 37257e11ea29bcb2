/**
 * The settings that reach storage, and the S3 clients built from them: one that sends calls and
 * one that only signs links, each given to the operations as `StorageClients`.
 */
import { S3Client } from '@aws-sdk/client-s3';

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

/** What every storage operation works with. */
export interface StorageClients {
  bucket: string;
  /** Sends the calls; observed (storage-observability.ts). */
  s3: S3Client;
  /** Signs links and sends nothing: a client of its own, so the observed stack of `s3` never sees a presigning. */
  signer: S3Client;
}

export function createS3Client(settings: StorageSettings, endpoint: string): S3Client {
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
