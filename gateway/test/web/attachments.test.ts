/**
 * A note's file in the web client, in a real headless Chromium against the real system: the file
 * chooser offers only what may be attached, a file that may not is explained beside its field in
 * words, an attached file shows its name, size and type and downloads under its name, and the
 * edit form can remove it. A note the API would refuse sends no file, a save that failed sends
 * the file's key again rather than the file, and an upload of any size can be paused, resumed
 * and cancelled.
 */
import { randomBytes } from 'node:crypto';
import { eventually } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page, Request, Route } from 'playwright-core';
import { type BrowserSuite, registerToNotes, screenshot, startBrowserSuite } from './browser';

let web: BrowserSuite;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  web = await startBrowserSuite('web-attachments');
  context = await web.browser.newContext({ viewport: { width: 1100, height: 800 } });
  context.setDefaultTimeout(20_000);
  page = await context.newPage();
  await registerToNotes(page, web, `files-${web.id}@example.com`);
}, 90_000);

afterAll(async () => {
  await context?.close();
  await web?.stop();
});

/** The requests that send a file: a link asked of the API, and the PUT to storage. */
function countUploads() {
  const seen = { links: 0, puts: 0 };
  const count = (request: Request) => {
    const url = new URL(request.url());
    if (request.method() === 'POST' && url.pathname === '/upload-url') seen.links++;
    if (request.method() === 'PUT' && url.pathname.includes('/uploads/')) seen.puts++;
  };
  page.on('request', count);
  return Object.assign(seen, { stop: () => page.off('request', count) });
}

/** How long the page may take to ask for a link and start its PUT, on a loaded machine. */
const IN_FLIGHT = { timeoutMs: 20_000 };

const isStoragePut = (url: URL) => url.pathname.includes('/uploads/') && !url.searchParams.has('partNumber');

describe("a note's file in the web client", () => {
  it('the chooser accepts only the allowed types, which the API publishes', async () => {
    const rules = (await (await fetch(`${web.origin}/api/upload-rules`)).json()) as { allowedTypes: string[] };
    expect(rules.allowedTypes).toContain('application/pdf');
    const chooser = page.getByLabel('Attachment (optional)');
    await eventually(
      "the chooser's accept filter",
      () => chooser.getAttribute('accept'),
      (accept) => accept === rules.allowedTypes.join(','),
    );
  });

  it('a file of a type that may not be attached is explained beside its field, listing what may, and nothing is sent', async () => {
    const sent: string[] = [];
    page.on('request', (request) => {
      if (request.method() !== 'GET') sent.push(request.url());
    });
    const chooser = page.getByLabel('Attachment (optional)');
    await page.getByLabel('Title').fill('A page');
    await chooser.setInputFiles({ name: 'page.html', mimeType: 'text/html', buffer: Buffer.from('<p>hi</p>') });
    const message =
      '“page.html” cannot be attached: text/html files are not accepted. You can attach PNG, JPEG, GIF, WebP, PDF, plain text, JSON or ZIP files.';
    // At once, before the form is sent.
    await expect(chooser.getAttribute('aria-invalid')).resolves.toBe('true');
    await page.locator('.field-error:not([hidden])', { hasText: message }).waitFor();
    const describedBy = (await chooser.getAttribute('aria-describedby')) as string;
    await expect(page.locator(`[id="${describedBy}"]`).textContent()).resolves.toBe(message);

    await page.getByRole('button', { name: 'Save note' }).click();
    await page.getByText('Please correct the highlighted fields.').waitFor();
    await expect(page.locator(`[id="${describedBy}"]`).textContent()).resolves.toBe(message);
    expect(sent).toEqual([]);
    await screenshot(page, 'attachments-refused-type');
  });

  it('an attached file shows its name, size and type; the edit form removes it, and storage deletes it', async () => {
    await page.getByLabel('Title').fill('Minutes');
    await page
      .getByLabel('Attachment (optional)')
      .setInputFiles({ name: 'Minutes – 3 March.pdf', mimeType: 'application/pdf', buffer: randomBytes(2048) });
    await page.getByRole('button', { name: 'Save note' }).click();
    await page.getByText('Note saved.').waitFor();
    const note = page.locator('li[data-note-id]', { hasText: 'Minutes' });
    await expect(note.locator('.attachment').textContent()).resolves.toBe(
      'File: Minutes – 3 March.pdf (2.0 KB, application/pdf)',
    );
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      note.getByRole('button', { name: 'Download Minutes – 3 March.pdf' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('Minutes – 3 March.pdf');
    const key = /uploads\/[^?]+/.exec(download.url())?.[0] as string;

    await note.getByRole('button', { name: 'Edit' }).click();
    await note.getByLabel('Remove Minutes – 3 March.pdf from this note').check();
    await note.getByRole('button', { name: 'Save changes' }).click();
    await note.getByRole('button', { name: 'Edit' }).waitFor();
    await expect(note.locator('.attachment').count()).resolves.toBe(0);
    await expect(note.getByRole('button', { name: /^Download/ }).count()).resolves.toBe(0);
    await eventually(
      'the removed file deleted from storage',
      () => web.storage.headObject(key),
      (head) => head === undefined,
      { timeoutMs: 10_000 },
    );
  });

  it('when a note with a file has no title, then the title is explained beside its field and the file is not sent; with a title, it goes up once', async () => {
    const uploads = countUploads();
    const chooser = page.getByLabel('Attachment (optional)');
    await page.getByLabel('Title').fill('');
    await chooser.setInputFiles({ name: 'agenda.pdf', mimeType: 'application/pdf', buffer: randomBytes(4096) });
    await page.getByRole('button', { name: 'Save note' }).click();
    await page.getByText('Please correct the highlighted fields.').waitFor();
    await page
      .locator('.field-error[data-field="title"]:not([hidden])', {
        hasText: 'Title is required and must be 1 to 200 characters',
      })
      .waitFor();
    expect({ links: uploads.links, puts: uploads.puts }).toEqual({ links: 0, puts: 0 });

    await page.getByLabel('Title').fill('Agenda');
    await page.getByRole('button', { name: 'Save note' }).click();
    await page.getByText('Note saved.').waitFor();
    uploads.stop();
    expect({ links: uploads.links, puts: uploads.puts }).toEqual({ links: 1, puts: 1 });
    await expect(
      page.locator('li[data-note-id]', { hasText: 'Agenda' }).locator('.attachment').textContent(),
    ).resolves.toBe('File: agenda.pdf (4.0 KB, application/pdf)');
  });

  it('when the API refuses a note after its file went up, then saving it again sends the same key, not the file', async () => {
    const uploads = countUploads();
    await page.getByLabel('Title').fill('Long minutes');
    // One character over the API's limit for a note's text, which the page does not know.
    await page.getByLabel('Text').fill('x'.repeat(100_001));
    await page
      .getByLabel('Attachment (optional)')
      .setInputFiles({ name: 'minutes.txt', mimeType: 'text/plain', buffer: randomBytes(3072) });
    await page.getByRole('button', { name: 'Save note' }).click();
    await page.locator('.field-error[data-field="body"]:not([hidden])').waitFor();
    expect({ links: uploads.links, puts: uploads.puts }).toEqual({ links: 1, puts: 1 });

    await page.getByLabel('Text').fill('Short, this time.');
    await page.getByRole('button', { name: 'Save note' }).click();
    await page.getByText('Note saved.').waitFor();
    uploads.stop();
    expect({ links: uploads.links, puts: uploads.puts }).toEqual({ links: 1, puts: 1 });
    await expect(
      page.locator('li[data-note-id]', { hasText: 'Long minutes' }).locator('.attachment').textContent(),
    ).resolves.toBe('File: minutes.txt (3.0 KB, text/plain)');
  });

  it('a small file’s upload shows Pause and Cancel: pause aborts the PUT, resume sends the file again, and cancel saves no note', async () => {
    const held: Route[] = [];
    let hold = true;
    await page.route(isStoragePut, (route) => {
      if (route.request().method() !== 'PUT' || !hold) return route.continue();
      held.push(route);
    });
    const failed: string[] = [];
    const onFailed = (request: Request) => {
      if (request.method() === 'PUT') failed.push(request.url());
    };
    page.on('requestfailed', onFailed);
    const uploads = countUploads();
    try {
      await page.getByLabel('Title').fill('Paused once');
      await page
        .getByLabel('Attachment (optional)')
        .setInputFiles({ name: 'small.txt', mimeType: 'text/plain', buffer: randomBytes(512 * 1024) });
      await page.getByRole('button', { name: 'Save note' }).click();
      await eventually(
        'the PUT in flight',
        async () => held.length,
        (n) => n === 1,
        IN_FLIGHT,
      );
      await page.getByRole('button', { name: 'Cancel upload' }).waitFor();
      await page.getByRole('button', { name: 'Pause' }).click();
      await page.getByRole('button', { name: 'Resume' }).waitFor();
      await eventually(
        'the PUT aborted',
        async () => failed.length,
        (n) => n === 1,
        IN_FLIGHT,
      );
      await page.locator('.progress-text', { hasText: '(paused)' }).waitFor();
      await screenshot(page, 'attachments-small-file-paused');
      expect(uploads.puts).toBe(1);

      hold = false;
      await page.getByRole('button', { name: 'Resume' }).click();
      await page.getByText('Note saved.').waitFor();
      expect(uploads.puts).toBe(2);
      await expect(
        page.locator('li[data-note-id]', { hasText: 'Paused once' }).locator('.attachment').textContent(),
      ).resolves.toBe('File: small.txt (512.0 KB, text/plain)');

      hold = true;
      await page.getByLabel('Title').fill('Never sent');
      await page
        .getByLabel('Attachment (optional)')
        .setInputFiles({ name: 'other.txt', mimeType: 'text/plain', buffer: randomBytes(512 * 1024) });
      await page.getByRole('button', { name: 'Save note' }).click();
      await eventually(
        'the PUT in flight',
        async () => held.length,
        (n) => n === 2,
        IN_FLIGHT,
      );
      await page.getByRole('button', { name: 'Cancel upload' }).click();
      await page.locator('form').getByRole('alert').getByText('The upload was cancelled.').waitFor();
      await expect(page.locator('li[data-note-id]', { hasText: 'Never sent' }).count()).resolves.toBe(0);
    } finally {
      uploads.stop();
      page.off('requestfailed', onFailed);
      await page.unroute(isStoragePut);
    }
  });
});
