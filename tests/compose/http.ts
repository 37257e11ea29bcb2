/**
 * What the Compose tests send from the host: JSON requests to the API through the balancer's
 * published port, raw bytes to that port, TCP probes of ports that must stay closed, and the
 * upload and download of objects through the links the API gives.
 */
import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { need } from './compose';

export const GATEWAY = need('GATEWAY_URL');
export const STORAGE = need('STORAGE_URL');

export interface Api {
  status: number;
  body: Record<string, unknown>;
}

export async function api(
  path: string,
  { method = 'GET', token, body }: { method?: string; token?: string; body?: unknown } = {},
): Promise<Api> {
  const res = await fetch(`${GATEWAY}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** A step's own request that must succeed for the step to go on: anything else throws. */
export function expectStatus(r: Api, status: number, what: string): Api {
  if (r.status !== status) throw new Error(`${what}: wanted ${status}, got ${r.status} ${JSON.stringify(r.body)}`);
  return r;
}

export const isErrorBody = (text: string): boolean => {
  try {
    return typeof (JSON.parse(text) as { error?: unknown }).error === 'string';
  } catch {
    return false;
  }
};

export const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

/** Every link to storage the API gave during the run, checked at the end for its address. */
export const storageLinks: { kind: 'upload' | 'download'; url: string }[] = [];

/** Uploads bytes through a link the API gave, to the address in the link, with its headers. */
export async function upload(token: string, bytes: Buffer, filename: string): Promise<string> {
  const link = expectStatus(
    await api('/api/upload-url', {
      method: 'POST',
      token,
      body: { contentType: 'image/png', filename, size: bytes.length },
    }),
    200,
    'upload link',
  ).body as { url: string; key: string; headers: Record<string, string> };
  storageLinks.push({ kind: 'upload', url: link.url });
  const put = await fetch(link.url, { method: 'PUT', headers: link.headers, body: bytes });
  if (!put.ok) throw new Error(`PUT to storage: ${put.status} ${await put.text()}`);
  return link.key;
}

/** Uploads `bytes` and creates a note that holds them; returns the note's id. */
export async function noteWithFile(token: string, bytes: Buffer, title: string): Promise<string> {
  const attachmentKey = await upload(token, bytes, `${title}.png`);
  const note = expectStatus(
    await api('/api/notes', { method: 'POST', token, body: { title, body: 'with a file', attachmentKey } }),
    201,
    `create note "${title}"`,
  ).body;
  return String(note._id ?? note.id);
}

export async function download(token: string, noteId: string): Promise<{ url: string; bytes: Buffer }> {
  const { url } = expectStatus(await api(`/api/notes/${noteId}/attachment`, { token }), 200, 'download link').body as {
    url: string;
  };
  storageLinks.push({ kind: 'download', url });
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET from storage: ${res.status}`);
  return { url, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** An auth request that costs identity nothing (no bcrypt, no per-account count): a 400. */
export async function authRequest(
  headers: Record<string, string> = {},
): Promise<{ status: number; retryAfter: string; body: string }> {
  const res = await fetch(`${GATEWAY}/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: '{}',
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after') ?? '', body: await res.text() };
}

/** Waits for the gateway's /readyz (through the balancer) to answer 200; returns how long it took. */
export async function gatewayReady(timeoutMs = 60_000): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    const res = await fetch(`${GATEWAY}/readyz`).catch(() => undefined);
    await res?.arrayBuffer();
    if (res?.status === 200) return Date.now() - started;
    await sleep(200);
  }
  throw new Error(`the gateway's /readyz did not answer 200 within ${timeoutMs} ms`);
}

/** Sends `request` as it is to the published port, and reads the answer's status, type and body. */
export function rawRequest(request: string): Promise<{ status: number; contentType: string; body: string }> {
  const { hostname, port } = new URL(GATEWAY);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), timeout: 5000 });
    const chunks: Buffer[] = [];
    socket.once('connect', () => socket.write(request));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.once('timeout', () => socket.destroy(new Error('no answer within 5 s')));
    socket.once('error', reject);
    socket.once('close', () => {
      const text = Buffer.concat(chunks).toString();
      const [head = '', body = ''] = text.split('\r\n\r\n');
      resolve({
        status: Number(head.split(' ')[1] ?? 0),
        contentType: /^content-type:\s*(.*)$/im.exec(head)?.[1]?.trim() ?? '',
        body,
      });
    });
  });
}

/** `open`, `refused`, `timeout` or the error code of a TCP connection to 127.0.0.1:`port`. */
export function tcpProbe(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, timeout: 2000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve('open');
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('timeout');
    });
    socket.once('error', (err: NodeJS.ErrnoException) =>
      resolve(err.code === 'ECONNREFUSED' ? 'refused' : String(err.code)),
    );
  });
}
