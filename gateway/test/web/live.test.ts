/**
 * The web client's live lists in Chromium, against the real system: a post published from
 * another session shows in the public list within a second, the indicator says "Live", seven tabs
 * share one stream (a browser allows six connections to an origin) and all of them follow it,
 * the stream moves to another tab when its tab closes, and a note saved in one tab shows in
 * another.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { type BrowserSuite, screenshot, startBrowserSuite } from './browser';

const PASSWORD = 'correct horse battery';
let web: BrowserSuite;
let context: BrowserContext;

beforeAll(async () => {
  web = await startBrowserSuite('live', { AUTH_RATE_LIMIT: '0' });
}, 90_000);
afterAll(async () => {
  await web?.stop();
});
afterEach(async () => {
  await context?.close();
});

/** Another person, through the API: registered, and able to publish. */
async function author() {
  const email = `author-${randomBytes(4).toString('hex')}@example.com`;
  const call = async (path: string, method: string, body: unknown, token?: string) => {
    const res = await fetch(`${web.origin}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    return (await res.json()) as Record<string, unknown>;
  };
  const { token } = (await call('/api/auth/register', 'POST', { email, password: PASSWORD })) as { token: string };
  return {
    /** Writes and publishes a post; resolves when the publish is answered. */
    async publish(title: string): Promise<void> {
      const post = await call('/api/posts', 'POST', { title, body: 'Published from another session.' }, token);
      await call(`/api/posts/${String(post._id)}`, 'PUT', { status: 'published' }, token);
    },
  };
}

const live = (page: Page) => page.locator('#live[data-status="live"]').waitFor({ timeout: 10_000 });

/** Opens `count` tabs on the public list; each is live. */
async function tabs(count: number): Promise<Page[]> {
  const pages: Page[] = [];
  for (let i = 0; i < count; i++) {
    const page = await context.newPage();
    await page.goto(`${web.origin}/`);
    pages.push(page);
  }
  await Promise.all(pages.map(live));
  return pages;
}

describe('live lists, in Chromium', () => {
  it('when a post is published from another session, then the public list shows it within a second, and the indicator says Live', async () => {
    context = await web.browser.newContext({ viewport: { width: 1100, height: 800 } });
    const [page] = await tabs(1);
    const writer = await author();
    const title = `Fresh ${randomBytes(3).toString('hex')}`;

    await writer.publish(title);
    const answeredAt = Date.now();
    await page?.getByRole('link', { name: title }).waitFor({ timeout: 5_000 });
    const shownAfterMs = Date.now() - answeredAt;
    if (page) await screenshot(page, 'live-post');

    expect(await page?.locator('#live').textContent()).toBe('Live');
    expect(shownAfterMs).toBeLessThan(1_000);
  });

  it('when seven tabs are open, then they share one stream, each loads and shows a new post, and the stream moves to another tab when its tab closes', async () => {
    context = await web.browser.newContext({ viewport: { width: 900, height: 700 } });
    /** The tab that opened each stream. */
    const streams: Page[] = [];
    context.on('request', (request) => {
      const page = request.frame().page();
      if (new URL(request.url()).pathname === '/api/realtime') streams.push(page);
    });
    const pages = await tabs(7);
    const writer = await author();
    const first = `Seven ${randomBytes(3).toString('hex')}`;

    await writer.publish(first);
    await Promise.all(pages.map((p) => p.getByRole('link', { name: first }).waitFor({ timeout: 5_000 })));
    expect(streams).toHaveLength(1);

    // The tab that holds the stream (whichever took the lock first) closes; another takes over.
    const leader = streams[0] as Page;
    expect(pages).toContain(leader);
    await leader.close();
    const rest = pages.filter((p) => p !== leader);
    const second = `After ${randomBytes(3).toString('hex')}`;
    await Promise.all(rest.map(live));
    await writer.publish(second);
    await Promise.all(rest.map((p) => p.getByRole('link', { name: second }).waitFor({ timeout: 5_000 })));

    expect(streams).toHaveLength(2);
    expect(rest).toContain(streams[1]);
  }, 60_000);

  it('when a note is saved in one tab, then another tab of the same person shows it on its notes list', async () => {
    context = await web.browser.newContext({ viewport: { width: 1100, height: 800 } });
    const [writing, reading] = await tabs(2);
    if (!writing || !reading) throw new Error('two tabs');
    const email = `notes-${randomBytes(4).toString('hex')}@example.com`;
    await writing.getByRole('link', { name: 'Register', exact: true }).click();
    await writing.getByLabel('E-mail').fill(email);
    await writing.getByLabel('Password').fill(PASSWORD);
    await writing.getByRole('button', { name: 'Create account' }).click();
    await writing.getByRole('heading', { name: 'My posts', level: 1 }).waitFor();
    // The other tab takes the session up from the cookie, on a reload.
    await reading.reload();
    await reading.locator('.nav .who').waitFor();
    await reading.goto(`${web.origin}/#/notes`);
    await reading.getByRole('heading', { name: 'Notes', level: 1 }).waitFor();
    await live(reading);
    await writing.goto(`${web.origin}/#/notes`);
    await writing.getByRole('heading', { name: 'Notes', level: 1 }).waitFor();

    const title = `Shared ${randomBytes(3).toString('hex')}`;
    await writing.getByLabel('Title').fill(title);
    await writing.getByRole('button', { name: 'Save note' }).click();

    await reading.getByRole('heading', { name: title, level: 3 }).waitFor({ timeout: 5_000 });
    await screenshot(reading, 'live-note');
    expect(await reading.locator('li[data-note-id] h3').first().textContent()).toBe(title);
  });
});
