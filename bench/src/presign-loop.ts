/**
 * The baseline for upload links: the same SDK call the files service makes (a presigned PUT with
 * content-type signed), in a loop, `concurrency` at a time. argv: JSON settings.
 */
import { randomUUID } from 'node:crypto';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';

async function main(): Promise<void> {
  const s = JSON.parse(process.argv[2] ?? '{}') as {
    endpoint: string;
    region: string;
    bucket: string;
    accessKeyId: string;
    secretAccessKey: string;
    concurrency: number;
    durationS: number;
  };
  const client = new S3Client({
    endpoint: s.endpoint,
    region: s.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
  });
  let done = 0;
  const deadline = Date.now() + s.durationS * 1000;
  await Promise.all(
    Array.from({ length: s.concurrency }, async () => {
      while (Date.now() < deadline) {
        const command = new PutObjectCommand({
          Bucket: s.bucket,
          Key: `uploads/${randomUUID()}.txt`,
          ContentType: 'text/plain',
        });
        await getSignedUrl(client, command, { expiresIn: 300, signableHeaders: new Set(['content-type']) });
        // Like autocannon, count only what completed in time, not what was in flight at the end.
        if (Date.now() <= deadline) done += 1;
      }
    }),
  );
  process.stdout.write(`${JSON.stringify({ rps: done / s.durationS, requests: done })}\n`);
}

void main();
