/**
 * A note's image in the web client, in a real headless Chromium against the real system: the
 * notes list shows a 100x100 thumbnail the API made of it (never the full image), under the
 * page's own Content-Security-Policy; a file that is not an image shows none.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import { type BrowserSuite, registerToNotes, startBrowserSuite } from './browser';

let web: BrowserSuite;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  web = await startBrowserSuite('web-thumbnails');
  context = await web.browser.newContext({ viewport: { width: 1100, height: 800 } });
  context.setDefaultTimeout(20_000);
  page = await context.newPage();
  await registerToNotes(page, web, `thumbs-${web.id}@example.com`);
}, 90_000);

afterAll(async () => {
  await context?.close();
  await web?.stop();
});

async function saveNote(title: string, file: { name: string; mimeType: string; buffer: Buffer }) {
  await page.getByLabel('Title').fill(title);
  await page.getByLabel('Attachment (optional)').setInputFiles(file);
  await page.getByRole('button', { name: 'Save note' }).click();
  await page.getByText('Note saved.').waitFor();
  return page.locator('li[data-note-id]', { hasText: title });
}

describe("a note's image in the web client", () => {
  it('the notes list shows a 100x100 thumbnail of it, and no request fetches the full image', async () => {
    const photo = await sharp({ create: { width: 1200, height: 800, channels: 3, background: '#2a7fbf' } })
      .jpeg()
      .toBuffer();
    const storageGets: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'GET' && /\/(uploads|thumbs)\//.test(request.url())) storageGets.push(request.url());
    });
    const blocked: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
    });

    const note = await saveNote('Harbour', { name: 'harbour.jpg', mimeType: 'image/jpeg', buffer: photo });

    const thumbnail = note.getByRole('img', { name: 'Thumbnail of harbour.jpg' });
    await thumbnail.waitFor();
    await page.waitForFunction(
      (img) => img instanceof HTMLImageElement && img.complete && img.naturalWidth > 0,
      await thumbnail.elementHandle(),
    );
    const size = await thumbnail.evaluate((img: HTMLImageElement) => [img.naturalWidth, img.naturalHeight]);
    expect(size).toEqual([100, 100]);
    expect(storageGets.length).toBeGreaterThan(0);
    expect(storageGets.every((url) => new URL(url).pathname.includes('/thumbs/'))).toBe(true);
    expect(blocked).toEqual([]);
  });

  it('a file that is not an image shows no thumbnail', async () => {
    const note = await saveNote('Agenda', { name: 'agenda.txt', mimeType: 'text/plain', buffer: Buffer.from('1. hi') });
    await note.getByRole('button', { name: 'Download agenda.txt' }).waitFor();
    await expect(note.locator('img').count()).resolves.toBe(0);
  });
});
