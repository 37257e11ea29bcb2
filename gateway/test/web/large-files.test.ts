/**
 * Large files from the web client, in a real headless Chromium against the real system: a file
 * in parts straight to storage, a failed part sent again, a pause that aborts the parts in flight
 * (nothing goes out while paused), a reload in the middle and a resume that sends only the missing
 * parts, and cancel.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@cs/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page, Route } from 'playwright-core';
import { type BrowserSuite, screenshot, startBrowserSuite } from './browser';

const MiB = 1024 * 1024;
let web: BrowserSuite;
let origin: string;
let storage: BrowserSuite['storage'];
let folder: string;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  web = await startBrowserSuite('web-large');
  ({ origin, storage } = web);
  folder = await mkdtemp(join(tmpdir(), 'large-files-'));
}, 90_000);

afterAll(async () => {
  await web?.stop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

afterEach(async () => {
  await context?.close();
});

/** A file of random bytes on disk (Playwright takes buffers of at most 50 MB). */
async function bigFile(name: string, size: number): Promise<{ path: string; bytes: Buffer }> {
  const bytes = randomBytes(size);
  const path = join(folder, name);
  await writeFile(path, bytes);
  return { path, bytes };
}

/** How long storage may take to show what the browser sent: parts of 8 MiB, on a loaded machine. */
const STORAGE_WAIT = { timeoutMs: 20_000 };

async function openNotes(label: string): Promise<void> {
  context = await web.browser.newContext({ viewport: { width: 1100, height: 800 } });
  context.setDefaultTimeout(20_000);
  page = await context.newPage();
  await page.goto(`${origin}/`);
  await page.getByRole('link', { name: 'Register', exact: true }).click();
  await page.getByLabel('E-mail').fill(`${label}-${web.id}@example.com`);
  await page.getByLabel('Password').fill('correct horse battery');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { name: 'My posts', level: 1 }).waitFor();
  await page.getByRole('link', { name: 'Notes', exact: true }).click();
  await page.getByRole('heading', { name: 'Notes', exact: true, level: 1 }).waitFor();
}

const partOf = (url: string) => Number(new URL(url).searchParams.get('partNumber') ?? 0);
const isPart = (url: URL) => url.searchParams.has('partNumber') && url.searchParams.has('uploadId');

/** The one multipart upload storage holds open in this suite's bucket, once there is one. */
async function openUpload(): Promise<{ key: string; uploadId: string }> {
  const [open] = await eventually(
    'one open multipart upload',
    () => storage.listMultipartUploads('uploads/'),
    (uploads) => uploads.length === 1,
    STORAGE_WAIT,
  );
  return open as { key: string; uploadId: string };
}

describe('large files from the web client, in Chromium, against the real system', () => {
  it('a 64 MiB file goes up in 8 MiB parts; a failed part is sent again; pause aborts the parts in flight and starts no other; resume sends again only the parts not in storage; after a reload the page offers to resume, and the same file sends only what is missing; the download is the very bytes', async () => {
    const { path, bytes } = await bigFile('archive.zip', 64 * MiB);
    await openNotes('large');

    // Parts 1-3 go through (part 2 fails once first); parts 4-7 are held until this test lets
    // them go, and part 8 until the reload.
    const tries = new Map<number, number>();
    const requested: number[] = [];
    const held = new Map<number, Route>();
    let holdFrom = 4;
    await page.route(isPart, async (route) => {
      const n = partOf(route.request().url());
      if (route.request().method() !== 'PUT') return route.continue();
      requested.push(n);
      tries.set(n, (tries.get(n) ?? 0) + 1);
      if (n === 2 && tries.get(n) === 1) {
        return route.fulfill({ status: 503, headers: { 'Access-Control-Allow-Origin': origin }, body: 'slow down' });
      }
      if (n >= holdFrom) {
        held.set(n, route);
        return;
      }
      return route.continue();
    });
    await page.getByLabel('Title').fill('Big archive');
    await page.getByLabel('Attachment (optional)').setInputFiles(path);
    await page.getByRole('button', { name: 'Save note' }).click();

    const { key, uploadId } = await openUpload();
    const partsInStorage = (count: number) =>
      eventually(
        `${count} parts in storage`,
        async () => (await storage.listParts(key, uploadId)) ?? [],
        (parts) => parts.length === count,
        STORAGE_WAIT,
      );
    await partsInStorage(3);
    expect(tries.get(2)).toBe(2);
    await eventually(
      'parts 4-7 in flight',
      async () => [...held.keys()].sort(),
      (n) => n.join() === '4,5,6,7',
    );

    // Pause: the four parts in flight are aborted, so that nothing goes out while paused; no other starts.
    const aborted: number[] = [];
    page.on('requestfailed', (request) => {
      if (request.method() === 'PUT' && isPart(new URL(request.url()))) aborted.push(partOf(request.url()));
    });
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByRole('button', { name: 'Resume' }).waitFor();
    await eventually(
      'parts 4-7 aborted',
      async () => [...aborted].sort(),
      (n) => n.join() === '4,5,6,7',
    );
    held.clear();
    await page.locator('.progress-text').getByText('24.0 MB of 64.0 MB sent (paused)', { exact: true }).waitFor();
    expect(requested.filter((n) => n > 7)).toEqual([]);
    expect((await storage.listParts(key, uploadId))?.length).toBe(3);
    await screenshot(page, '10-large-file-paused');

    // Resume sends again the four parts the pause cut off, and then the last (held now, until the reload).
    holdFrom = 8;
    const beforeResume = requested.length;
    await page.getByRole('button', { name: 'Resume' }).click();
    await partsInStorage(7);
    await eventually(
      'part 8 in flight',
      async () => held.has(8),
      (has) => has,
    );
    expect(requested.slice(beforeResume).sort()).toEqual([4, 5, 6, 7, 8]);

    await page.reload();
    await Promise.allSettled([...held.values()].map((route) => route.abort()));
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    await page.getByRole('heading', { name: 'Notes', exact: true, level: 1 }).waitFor();
    // The page offers to finish what the reload interrupted.
    const offer = page.locator('.unfinished-upload');
    await expect(offer.locator('p').textContent()).resolves.toBe(
      'The upload of “archive.zip” (64.0 MB) did not finish. Choose the same file below to continue where it stopped.',
    );
    await screenshot(page, '11-large-file-offered-after-reload');

    const sentAfterReload: number[] = [];
    page.on('request', (request) => {
      if (request.method() === 'PUT' && isPart(new URL(request.url()))) sentAfterReload.push(partOf(request.url()));
    });
    await page.getByLabel('Title').fill('Big archive');
    await page.getByLabel('Attachment (optional)').setInputFiles(path);
    await page.getByRole('button', { name: 'Save note' }).click();
    await page.getByText('Note saved.').waitFor({ timeout: 60_000 });

    expect(sentAfterReload).toEqual([8]);
    await expect(offer.count()).resolves.toBe(0);
    await expect(page.locator('.progress-text').textContent()).resolves.toBe('archive.zip: 64.0 MB uploaded');
    expect(await storage.listMultipartUploads('uploads/')).toEqual([]);
    expect((await storage.headObject(key))?.size).toBe(bytes.length);

    const note = page.locator('li[data-note-id]', { hasText: 'Big archive' });
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      note.getByRole('button', { name: 'Download archive.zip' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('archive.zip');
    const got = await readFile((await download.path()) as string);
    const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    expect(digest(got)).toBe(digest(bytes));
  }, 120_000);

  it('cancel aborts the upload: storage keeps no parts, and no note is saved', async () => {
    const { path } = await bigFile('dataset.zip', 20 * MiB);
    await openNotes('cancel');
    const held: Route[] = [];
    await page.route(isPart, (route) => {
      if (partOf(route.request().url()) === 1) return route.continue();
      held.push(route);
    });
    await page.getByLabel('Title').fill('Never saved');
    await page.getByLabel('Attachment (optional)').setInputFiles(path);
    await page.getByRole('button', { name: 'Save note' }).click();
    const { key, uploadId } = await openUpload();
    await eventually(
      'part 1 in storage',
      async () => (await storage.listParts(key, uploadId)) ?? [],
      (parts) => parts.length === 1,
      STORAGE_WAIT,
    );

    await page.getByRole('button', { name: 'Cancel upload' }).click();
    await page.locator('form').getByRole('alert').getByText('The upload was cancelled.').waitFor();
    await eventually(
      'no open multipart upload',
      () => storage.listMultipartUploads('uploads/'),
      (uploads) => uploads.length === 0,
      STORAGE_WAIT,
    );
    expect(await storage.listParts(key, uploadId)).toBeUndefined();
    expect(await storage.headObject(key)).toBeUndefined();
    await page.getByText('No notes yet.').waitFor();
    await Promise.allSettled(held.map((route) => route.abort()));
  }, 60_000);
});
