/**
 * One large file sent in parts, timed, one of two ways (argv: JSON settings):
 * - `ours`: through the system, as the web client does it: create the upload at the gateway,
 *   have part links signed (100 a request), PUT the parts straight to storage, `concurrency` at
 *   a time, and complete. The PUTs go through node:http with a keep-alive agent, the HTTP client
 *   the SDK uses too: so the two differ in the protocol path only. (Node's fetch took 1.7× as
 *   long as node:http for the same 8 MiB PUTs here: a client library's cost, not the design's.)
 * - `sdk`: the AWS SDK's own multipart upload (`@aws-sdk/lib-storage`) to the same server, with
 *   the same part size and concurrency, and the service's credentials.
 * Prints `{rps, seconds, mbPerS}`, where rps is uploads a second (for the interleaving harness).
 */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { DeleteObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';

interface Settings {
  mode: 'ours' | 'sdk';
  sizeMb: number;
  partSize: number;
  concurrency: number;
  gateway: string;
  token: string;
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
}

async function api<T>(s: Settings, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${s.gateway}${path}`, {
    method,
    headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

const agent = new Agent({ keepAlive: true });

/** One PUT of `body` to a signed link; resolves with the status once the answer is read. */
function put(url: string, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = request(
      { host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: 'PUT', agent },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.setHeader('content-length', body.length);
    req.on('error', reject);
    req.end(body);
  });
}

async function ours(s: Settings, file: Buffer): Promise<string> {
  const upload = await api<{ uploadId: string; key: string; partSize: number; partCount: number }>(
    s,
    'POST',
    '/api/multipart-uploads',
    { contentType: 'application/zip', filename: 'bench.zip', size: file.length },
  );
  if (upload.partSize !== s.partSize) throw new Error(`the service chose parts of ${upload.partSize} bytes`);
  const urls = new Map<number, string>();
  const numbers = Array.from({ length: upload.partCount }, (_, i) => i + 1);
  for (let i = 0; i < numbers.length; i += 100) {
    const signed = await api<{ parts: { partNumber: number; url: string }[] }>(
      s,
      'POST',
      `/api/multipart-uploads/${upload.uploadId}/part-urls`,
      { partNumbers: numbers.slice(i, i + 100) },
    );
    for (const part of signed.parts) urls.set(part.partNumber, part.url);
  }
  const queue = [...numbers];
  await Promise.all(
    Array.from({ length: s.concurrency }, async () => {
      for (let n = queue.shift(); n !== undefined; n = queue.shift()) {
        const body = file.subarray((n - 1) * upload.partSize, n * upload.partSize);
        const status = await put(urls.get(n) ?? '', body);
        if (status !== 200) throw new Error(`part ${n}: storage answered ${status}`);
      }
    }),
  );
  await api(s, 'POST', `/api/multipart-uploads/${upload.uploadId}/complete`);
  return upload.key;
}

async function sdk(s: Settings, client: S3Client, file: Buffer): Promise<string> {
  const key = `uploads/${crypto.randomUUID()}.zip`;
  await new Upload({
    client,
    params: { Bucket: s.bucket, Key: key, Body: file, ContentType: 'application/zip' },
    partSize: s.partSize,
    queueSize: s.concurrency,
    leavePartsOnError: false,
  }).done();
  return key;
}

async function main(): Promise<void> {
  const s = JSON.parse(process.argv[2] ?? '{}') as Settings;
  const client = new S3Client({
    endpoint: s.endpoint,
    region: s.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
  });
  const file = randomBytes(s.sizeMb * 1024 * 1024);
  const started = performance.now();
  const key = s.mode === 'ours' ? await ours(s, file) : await sdk(s, client, file);
  const seconds = (performance.now() - started) / 1000;
  // Not timed: the object is of no further use, and a run writes many of them.
  await client.send(new DeleteObjectCommand({ Bucket: s.bucket, Key: key }));
  client.destroy();
  agent.destroy();
  const mbPerS = s.sizeMb / seconds;
  const result = {
    requests: 1,
    rps: 1 / seconds,
    p50: seconds * 1000,
    p99: seconds * 1000,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
  };
  process.stdout.write(`${JSON.stringify({ ...result, seconds, mbPerS })}\n`);
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
