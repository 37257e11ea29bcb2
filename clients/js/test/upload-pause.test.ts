/**
 * Pause, resume and cancel of uploads of every size, seen on the wire: the system signs its links
 * for a pass-through in front of the real storage, which counts what each PUT carries and can
 * stop reading (so that a PUT stays in flight until the test lets it go on).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { prepareBucket, type RunningSystem } from '@cs/devstack';
import { eventually, startTestSystem, testStorageSettings } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createContentClient, UploadAbortedError } from '../src/index.js';

const MiB = 1024 * 1024;
const id = randomBytes(3).toString('hex');
const storageSettings = { ...testStorageSettings(), bucket: `client-pause-${id}` };

/** One PUT as storage's pass-through saw it. */
interface SeenPut {
  path: string;
  bytes: number;
  /** Whether its whole body arrived; undefined while it is in flight. */
  complete?: boolean;
}

/**
 * Storage as the links name it. Every request goes on to storage as it came, Host included (so
 * its signature holds); a PUT's body is read only while `flowing`, and a PUT whose sender gave up
 * is given up towards storage too.
 */
async function startWire(target: string) {
  const puts: SeenPut[] = [];
  const held = new Set<IncomingMessage>();
  let flowing = true;
  const server = createServer((req, res) => {
    const upstream = request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers });
    upstream.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    if (req.method !== 'PUT') {
      req.pipe(upstream);
      return;
    }
    const seen: SeenPut = { path: new URL(req.url ?? '/', target).pathname, bytes: 0 };
    puts.push(seen);
    req.on('data', (chunk: Buffer) => {
      seen.bytes += chunk.length;
      upstream.write(chunk);
      if (!flowing) {
        req.pause();
        held.add(req);
      }
    });
    req.on('end', () => upstream.end());
    req.on('close', () => {
      seen.complete = req.complete;
      if (!req.complete) upstream.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    puts,
    /** The PUTs that have not ended. */
    inFlight: () => puts.filter((put) => put.complete === undefined),
    /** Stops reading PUT bodies: their senders wait, in flight, once the buffers are full. */
    hold() {
      flowing = false;
    },
    /** Reads them again, as fast as they come. */
    flow() {
      flowing = true;
      for (const req of held) req.resume();
      held.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let wire: Awaited<ReturnType<typeof startWire>>;
let system: RunningSystem;

beforeAll(async () => {
  await prepareBucket({ ...storageSettings, corsOrigins: [] });
  wire = await startWire(storageSettings.endpoint);
  system = await startTestSystem({
    storage: { ...storageSettings, publicEndpoint: wire.url },
    // The default types, and one the library knows no extension for.
    env: {
      UPLOAD_ALLOWED_TYPES:
        'image/png,image/jpeg,image/gif,image/webp,application/pdf,text/plain,application/json,application/zip,audio/ogg',
    },
  });
}, 60_000);

afterAll(async () => {
  await system?.stop();
  await wire?.close();
});

async function signedIn(label: string) {
  const client = createContentClient({ baseUrl: system.gatewayUrl });
  await client.register(`${label}-${id}-${randomBytes(3).toString('hex')}@example.com`, 'correct horse battery');
  return client;
}

async function download(client: Awaited<ReturnType<typeof signedIn>>, key: string): Promise<Buffer> {
  const note = await client.notes.create({ title: 'with a file', attachmentKey: key });
  const { url } = await client.notes.downloadLink(note._id);
  return Buffer.from(await (await fetch(url)).arrayBuffer());
}

/** The PUTs from `from` on, once every one of them has ended. */
const ended = (from: number) =>
  eventually(
    'every PUT ended',
    async () => wire.puts.slice(from),
    (puts) => puts.every((put) => put.complete !== undefined),
    { timeoutMs: 10_000 },
  );

/** Nothing reaches storage for a while: no byte more, and no new PUT. */
async function quiet(): Promise<void> {
  const before = wire.puts.map((put) => put.bytes);
  await sleep(1500);
  expect(wire.puts.map((put) => put.bytes)).toEqual(before);
}

describe('pause: what is in flight is aborted, and nothing is sent until resume', () => {
  it('when a file in parts is paused, then its parts in flight are aborted and no byte goes out until resume, which sends them again', async () => {
    const client = await signedIn('parts');
    const bytes = randomBytes(24 * MiB);
    const from = wire.puts.length;
    wire.hold();
    const task = client.startUpload(new Blob([bytes], { type: 'application/zip' }), {
      filename: 'parts.zip',
      multipartFrom: 5 * MiB,
      concurrency: 3,
    });
    // Parts of 8 MiB: all three in flight, each held after its first bytes.
    await eventually(
      'three parts in flight',
      async () => wire.inFlight().filter((put) => put.bytes > 0).length,
      (count) => count === 3,
      { timeoutMs: 20_000 },
    );

    task.pause();
    expect(task.paused).toBe(true);
    // Storage reads again: what was already in the buffers arrives, and then each PUT ends, cut off.
    await sleep(100);
    wire.flow();
    const aborted = await ended(from);
    expect(aborted.map((put) => put.complete)).toEqual([false, false, false]);
    expect(aborted.reduce((sum, put) => sum + put.bytes, 0)).toBeLessThan(bytes.length);
    await quiet();
    expect(wire.puts.length).toBe(from + 3);

    task.resume();
    const key = await task.done;
    expect(key).toMatch(/^uploads\/[0-9a-f-]{36}\.zip$/);
    const again = wire.puts.slice(from + 3);
    expect(again.map((put) => [put.complete, put.bytes])).toEqual([
      [true, 8 * MiB],
      [true, 8 * MiB],
      [true, 8 * MiB],
    ]);
    expect((await download(client, key)).equals(bytes)).toBe(true);
  }, 90_000);

  it('when a file sent in one PUT is paused, then the PUT is aborted, and resume sends it again from its first byte', async () => {
    const client = await signedIn('one-put');
    const bytes = randomBytes(6 * MiB);
    const from = wire.puts.length;
    wire.hold();
    const task = client.startUpload(new Blob([bytes], { type: 'application/pdf' }), { filename: 'paper.pdf' });
    await eventually(
      'the PUT in flight',
      async () => wire.inFlight().filter((put) => put.bytes > 0).length,
      (count) => count === 1,
      { timeoutMs: 20_000 },
    );

    task.pause();
    await sleep(100);
    wire.flow();
    const [aborted] = await ended(from);
    expect(aborted?.complete).toBe(false);
    expect(aborted?.bytes).toBeLessThan(bytes.length);
    await quiet();
    expect(wire.puts.length).toBe(from + 1);

    task.resume();
    const key = await task.done;
    expect(wire.puts.slice(from + 1).map((put) => [put.path, put.complete, put.bytes])).toEqual([
      [expect.stringMatching(new RegExp(`/${key}$`)), true, bytes.length],
    ]);
    expect((await download(client, key)).equals(bytes)).toBe(true);
  }, 90_000);

  it('when a file sent in one PUT is cancelled, then the PUT is aborted and the upload rejects with UploadAbortedError', async () => {
    const client = await signedIn('cancel');
    const from = wire.puts.length;
    const controller = new AbortController();
    wire.hold();
    const task = client.startUpload(new Blob([randomBytes(6 * MiB)], { type: 'text/plain' }), {
      filename: 'notes.txt',
      signal: controller.signal,
    });
    await eventually(
      'the PUT in flight',
      async () => wire.inFlight().filter((put) => put.bytes > 0).length,
      (count) => count === 1,
      { timeoutMs: 20_000 },
    );

    controller.abort();
    await expect(task.done).rejects.toBeInstanceOf(UploadAbortedError);
    wire.flow();
    const [aborted] = await ended(from);
    expect(aborted?.complete).toBe(false);
    await quiet();
    expect(wire.puts.length).toBe(from + 1);
    expect(aborted?.bytes).toBeLessThan(6 * MiB);
  }, 60_000);

  it('a paused upload can be cancelled: it rejects with UploadAbortedError and sends nothing more', async () => {
    const client = await signedIn('paused-cancel');
    const from = wire.puts.length;
    const controller = new AbortController();
    wire.hold();
    const task = client.startUpload(new Blob([randomBytes(6 * MiB)], { type: 'text/plain' }), {
      filename: 'later.txt',
      signal: controller.signal,
    });
    await eventually(
      'the PUT in flight',
      async () => wire.inFlight().filter((put) => put.bytes > 0).length,
      (count) => count === 1,
      { timeoutMs: 20_000 },
    );
    task.pause();
    await sleep(100);
    wire.flow();
    await ended(from);

    controller.abort();
    await expect(task.done).rejects.toBeInstanceOf(UploadAbortedError);
    await quiet();
    expect(wire.puts.length).toBe(from + 1);
  }, 60_000);
});

describe('a paused upload begun again elsewhere (a reload)', () => {
  it('when a paused file in parts is started again by a new client, then the parts storage holds only in part are sent again, and the file is whole', async () => {
    // A browser's localStorage, shared by the two clients as by a page and its reload.
    const area = new Map<string, string>();
    const shim = {
      getItem: (k: string) => area.get(k) ?? null,
      setItem: (k: string, v: string) => void area.set(k, v),
      removeItem: (k: string) => void area.delete(k),
      key: (i: number) => [...area.keys()][i] ?? null,
      get length() {
        return area.size;
      },
    };
    Object.defineProperty(globalThis, 'localStorage', { value: shim, configurable: true });
    try {
      const address = `reload-${id}-${randomBytes(3).toString('hex')}@example.com`;
      const first = createContentClient({ baseUrl: system.gatewayUrl });
      await first.register(address, 'correct horse battery');
      const bytes = randomBytes(24 * MiB);
      const file = new Blob([bytes], { type: 'application/zip' });
      const options = { filename: 'reloaded.zip', multipartFrom: 5 * MiB, concurrency: 3 };
      const from = wire.puts.length;
      wire.hold();
      const task = first.startUpload(file, options);
      void task.done.catch(() => undefined);
      await eventually(
        'three parts in flight',
        async () => wire.inFlight().filter((put) => put.bytes > 0).length,
        (count) => count === 3,
        { timeoutMs: 20_000 },
      );
      task.pause();
      await sleep(100);
      wire.flow();
      const cut = await ended(from);
      expect(cut.map((put) => put.complete)).toEqual([false, false, false]);
      expect(first.unfinishedUploads()).toHaveLength(1);

      const second = createContentClient({ baseUrl: system.gatewayUrl });
      await second.login(address, 'correct horse battery');
      const key = await second.upload(file, options);
      expect(wire.puts.slice(from + 3).map((put) => [put.complete, put.bytes])).toEqual([
        [true, 8 * MiB],
        [true, 8 * MiB],
        [true, 8 * MiB],
      ]);
      expect((await download(second, key)).equals(bytes)).toBe(true);
    } finally {
      Reflect.deleteProperty(globalThis, 'localStorage');
    }
  }, 90_000);
});

describe('a Blob without a name', () => {
  it('when a PNG Blob has no name, then its key ends in .png, and its download is named file.png', async () => {
    const client = await signedIn('nameless');
    const key = await client.upload(new Blob([randomBytes(1024)], { type: 'image/png' }));
    expect(key).toMatch(/^uploads\/[0-9a-f-]{36}\.png$/);
    const note = await client.notes.create({ title: 'a picture', attachmentKey: key });
    expect(note.attachment?.filename).toBe('file.png');
  });

  it('when a Blob of a type the library knows no extension for has no name, then it is `file`, with a .bin key', async () => {
    const client = await signedIn('nameless-other');
    const key = await client.upload(new Blob([randomBytes(1024)], { type: 'audio/ogg' }));
    expect(key).toMatch(/^uploads\/[0-9a-f-]{36}\.bin$/);
    const note = await client.notes.create({ title: 'a sound', attachmentKey: key });
    expect(note.attachment?.filename).toBe('file');
  });
});
