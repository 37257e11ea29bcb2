/**
 * Live updates for an app served from another origin than the API, in Chromium: a page at
 * http://localhost:<port> (a server of this test's own) follows a stream of the gateway at
 * http://127.0.0.1:<port>, with access tokens that live 8 s, so that a stream meets a token's
 * end. Through the client library, which renews the session and resumes with `Last-Event-ID`;
 * and through a plain `EventSource` with a ticket, which on `auth.expired` takes a fresh ticket
 * and resumes with `?lastEventId=`, and which the browser itself reconnects with the same ticket
 * after its connection drops. Posts are written all along, from outside the page; each stream
 * must show every one, once, in order.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, REPO_ROOT, type RunningSystem } from '@cs/devstack';
import { eventually, startTestSystem } from '@cs/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { build } from 'esbuild';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from './browser';

const PASSWORD = 'correct horse battery';
/** How long an access token lives here: each stream below outlives a few. */
const TOKEN_LIFE_S = 8;

let system: RunningSystem;
let browser: Browser;
let pages: Server;
let api: string;
let app: string;
let context: BrowserContext;

/** The page: the client library as one module, and an empty document that loads it. */
async function servePages(): Promise<Server> {
  const bundle = await build({
    entryPoints: [join(REPO_ROOT, 'clients/js/src/index.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    write: false,
  });
  const client = bundle.outputFiles[0]?.text ?? '';
  const server = createServer((req, res) => {
    if (req.url === '/client.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(client);
    } else {
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          '<!doctype html><title>another origin</title>' +
            "<script type=module>import * as client from '/client.js'; window.contentClient = client;</script>",
        );
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

beforeAll(async () => {
  pages = await servePages();
  app = `http://localhost:${(pages.address() as AddressInfo).port}`;
  const gatewayPort = await freePort();
  api = `http://127.0.0.1:${gatewayPort}`;
  [system, browser] = await Promise.all([
    startTestSystem({
      gatewayPort,
      frontendOrigin: app,
      env: { AUTH_RATE_LIMIT: '0', JWT_EXPIRES_IN: `${TOKEN_LIFE_S}s` },
    }),
    launchChromium(),
  ]);
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await system?.stop();
  pages?.close();
});
afterEach(async () => {
  await context?.close();
});

async function call(path: string, body: unknown, token?: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${api}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** A new account; its e-mail. */
async function account(): Promise<string> {
  const email = `live-${randomBytes(4).toString('hex')}@example.com`;
  await call('/api/auth/register', { email, password: PASSWORD });
  return email;
}

/**
 * Writes posts as `email`, from outside the page, one every 150 ms for `forMs`: logs in again
 * whenever its token has run out. Resolves with their titles, in the order they were created.
 */
async function writeAlong(email: string, forMs: number): Promise<string[]> {
  const titles: string[] = [];
  let token = '';
  const until = Date.now() + forMs;
  while (Date.now() < until) {
    const title = `Post ${titles.length + 1} ${randomBytes(2).toString('hex')}`;
    const res = await fetch(`${api}/api/posts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ title, body: 'Written while the page follows.' }),
    });
    if (res.status === 401) {
      token = String((await call('/api/auth/login', { email, password: PASSWORD })).token);
      continue;
    }
    expect(res.status).toBe(201);
    titles.push(title);
    await sleep(150);
  }
  return titles;
}

/** A page of the other origin, with what it asks of the API recorded. */
async function openApp(): Promise<{ page: Page; streams: { lastEventId?: string; status?: number }[] }> {
  context = await browser.newContext();
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  const streams: { lastEventId?: string; status?: number }[] = [];
  page.on('request', (request) => {
    if (new URL(request.url()).pathname !== '/api/realtime' || request.method() !== 'GET') return;
    const stream: { lastEventId?: string; status?: number } = {};
    streams.push(stream);
    // Every header it went with (`headers()` leaves out those the network stack adds).
    request.allHeaders().then(
      (headers) => {
        stream.lastEventId =
          headers['last-event-id'] ?? new URL(request.url()).searchParams.get('lastEventId') ?? undefined;
      },
      () => undefined,
    );
    request.response().then(
      (response) => {
        stream.status = response?.status();
      },
      () => undefined,
    );
  });
  await page.goto(`${app}/`);
  await page.waitForFunction(() => 'contentClient' in window);
  return { page, streams };
}

/** The titles of `my-posts.upsert` the page has seen, in order, once it has seen `count`. */
const seenAll = (page: Page, count: number) =>
  eventually(
    `${count} posts seen on the page`,
    () => page.evaluate(() => (window as unknown as { seen: string[] }).seen),
    (seen) => seen.length >= count,
    { timeoutMs: 10_000 },
  );

describe('live updates on another origin, in Chromium', () => {
  it('when the client library follows a stream across token renewals, then the page sees every post once, in order, and each reconnect resumes with Last-Event-ID', async () => {
    const email = await account();
    const { page, streams } = await openApp();
    await page.evaluate(
      async ({ api, email, password }) => {
        const { createContentClient } = (
          window as unknown as { contentClient: typeof import('@content-service/client') }
        ).contentClient;
        const client = createContentClient({ baseUrl: api });
        await client.login(email, password);
        const seen: string[] = [];
        Object.assign(window, { seen });
        await new Promise<void>((live) => {
          client.subscribe(['my-posts'], {
            'my-posts': { upsert: (post) => seen.push(post.title) },
            status: (status) => status === 'live' && live(),
          });
        });
      },
      { api, email, password: PASSWORD },
    );

    const written = await writeAlong(email, 1.5 * TOKEN_LIFE_S * 1000);

    expect(await seenAll(page, written.length)).toEqual(written);
    const reconnects = streams.slice(1);
    expect(reconnects.length).toBeGreaterThanOrEqual(1);
    for (const stream of reconnects) expect(stream.lastEventId).toMatch(/^\d+-\d+$/);
    expect(streams.map((stream) => stream.status)).toEqual(streams.map(() => 200));
  }, 45_000);

  it('when a plain EventSource with a ticket meets auth.expired, then a fresh ticket and ?lastEventId= resume it, and the page sees every post once, in order', async () => {
    const email = await account();
    const { page, streams } = await openApp();
    await page.evaluate(
      async ({ api, email, password }) => {
        const post = async (path: string, body: unknown, token?: string) => {
          const res = await fetch(`${api}${path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
            body: JSON.stringify(body),
          });
          return (await res.json()) as { token: string; refreshToken: string; ticket: string };
        };
        // As docs/api.md shows it: a ticket for the stream, and on auth.expired a fresh one.
        let session = await post('/api/auth/login', { email, password });
        let last: string | undefined;
        const seen: string[] = [];
        Object.assign(window, { seen });
        const open = async (): Promise<void> => {
          const { ticket } = await post('/api/realtime/ticket', {}, session.token);
          const resume = last ? `&lastEventId=${encodeURIComponent(last)}` : '';
          const events = new EventSource(`${api}/api/realtime?topics=my-posts&ticket=${ticket}${resume}`);
          events.addEventListener('my-posts.upsert', (event) => {
            last = event.lastEventId;
            seen.push((JSON.parse(event.data) as { title: string }).title);
          });
          events.addEventListener('auth.expired', async (event) => {
            events.close();
            last = event.lastEventId || last;
            // A page busy elsewhere for a second: posts are written meanwhile, and must not be missed.
            await new Promise((resume) => setTimeout(resume, 1_000));
            session = await post('/api/auth/refresh', { refreshToken: session.refreshToken });
            await open();
          });
          await new Promise((opened) => events.addEventListener('open', opened, { once: true }));
        };
        await open();
      },
      { api, email, password: PASSWORD },
    );

    const written = await writeAlong(email, 1.5 * TOKEN_LIFE_S * 1000);

    expect(await seenAll(page, written.length)).toEqual(written);
    const resumed = streams.slice(1);
    expect(resumed.length).toBeGreaterThanOrEqual(1);
    for (const stream of resumed) expect(stream.lastEventId).toMatch(/^\d+-\d+$/);
    expect(streams.map((stream) => stream.status)).toEqual(streams.map(() => 200));
  }, 45_000);

  it('when the connection of a plain EventSource with a ticket drops, then the browser reconnects with the same ticket and Last-Event-ID, and nothing is missed', async () => {
    const email = await account();
    const { page, streams } = await openApp();
    const ticketUrl = await page.evaluate(
      async ({ api, email, password }) => {
        const post = async (path: string, body: unknown, token?: string) => {
          const res = await fetch(`${api}${path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
            body: JSON.stringify(body),
          });
          return (await res.json()) as { token: string; ticket: string };
        };
        const { token } = await post('/api/auth/login', { email, password });
        const { ticket } = await post('/api/realtime/ticket', {}, token);
        const url = `${api}/api/realtime?topics=my-posts&ticket=${ticket}`;
        const seen: string[] = [];
        Object.assign(window, { seen });
        const events = new EventSource(url);
        events.addEventListener('my-posts.upsert', (event) => {
          seen.push((JSON.parse(event.data) as { title: string }).title);
        });
        await new Promise((opened) => events.addEventListener('open', opened, { once: true }));
        return url;
      },
      { api, email, password: PASSWORD },
    );

    const writing = writeAlong(email, 2_500);
    // Once the page has an event to resume from, the ticket opened again elsewhere cuts the page's stream (one stream a ticket): the page's
    // connection drops, and its EventSource reconnects by itself, with the same URL, about 3 s
    // later (Chromium's delay), well within the life of the ticket's token.
    await seenAll(page, 1);
    const elsewhere = new AbortController();
    const cutter = await fetch(ticketUrl, { signal: elsewhere.signal });
    expect(cutter.status).toBe(200);
    elsewhere.abort();
    const written = await writing;

    expect(await seenAll(page, written.length)).toEqual(written);
    expect(streams.length).toBeGreaterThanOrEqual(2);
    expect(streams[1]?.lastEventId).toMatch(/^\d+-\d+$/);
    expect(streams.map((stream) => stream.status)).toEqual(streams.map(() => 200));
  }, 45_000);
});
