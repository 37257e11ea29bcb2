/**
 * The web client in a real headless Chromium, against the real system: gateway, services,
 * MongoDB-protocol server and S3 storage. The page is served by the gateway at
 * http://127.0.0.1:<port>; a bucket of this suite's own allows exactly that origin, so the same
 * page opened as http://localhost:<port> is an origin storage refuses.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { eventually } from '@cs/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page, Request } from 'playwright-core';
import { type BrowserSuite, screenshot, startBrowserSuite } from './browser';

let web: BrowserSuite;
let suite: string;
let origin: string;
let storageSettings: BrowserSuite['storageSettings'];
let storage: BrowserSuite['storage'];
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  // Auth rate limit off: the suite registers and logs in more than ten times a minute.
  web = await startBrowserSuite('web', { AUTH_RATE_LIMIT: '0' });
  ({ id: suite, origin, storageSettings, storage } = web);
}, 90_000);

afterAll(async () => {
  await web?.stop();
});

async function openPage(at = `${origin}/`): Promise<Page> {
  context = await web.browser.newContext({ viewport: { width: 1100, height: 800 } });
  // Well under jest's 30 s, so a step that never happens fails with its own locator.
  context.setDefaultTimeout(10_000);
  page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
  await page.goto(at);
  return page;
}

afterEach(async () => {
  await context?.close();
});

function newEmail(label: string): string {
  return `${label}-${suite}-${randomBytes(3).toString('hex')}@example.com`;
}

/**
 * Follows a link inside the app, then waits for the screen it leads to. The app renders on
 * `hashchange`, a task after the click, so without the wait the next `fill` can land in a field of
 * the screen being left (My posts and Notes both have a Title) and be lost with it.
 */
async function follow(link: string, heading: string): Promise<void> {
  await page.getByRole('link', { name: link, exact: true }).click();
  await page.getByRole('heading', { name: heading, exact: true, level: 1 }).waitFor();
}

async function register(email: string): Promise<void> {
  await follow('Register', 'Create an account');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill('correct horse battery');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { name: 'My posts', level: 1 }).waitFor();
}

/** From another device: logs in as `email`, then ends every session of the account. */
async function logOutEverywhereElsewhere(email: string): Promise<void> {
  const login = await fetch(`${origin}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'correct horse battery' }),
  });
  const { token } = (await login.json()) as { token: string };
  const ended = await fetch(`${origin}/api/auth/sessions`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${token}` },
  });
  expect(ended.status).toBe(204);
}

/** On the login screen: logs in as `email`. */
async function logIn(email: string): Promise<void> {
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill('correct horse battery');
  await page.getByRole('button', { name: 'Log in' }).click();
}

/** Every alert the page shows must be words, never JSON. */
async function expectPlainWords(text: string | null): Promise<void> {
  expect(text).toBeTruthy();
  expect(text).not.toMatch(/[{}[\]"]/);
}

describe('the web client, in Chromium, against the real system', () => {
  it('register → write, publish, edit a post → find it by tag → unpublish and delete it → note with a file uploaded straight to storage → download the same bytes → edit → delete → log out', async () => {
    await openPage();
    await page.getByRole('heading', { name: 'Posts', level: 1 }).waitFor();
    await screenshot(page, '01-posts-anonymous');

    const email = newEmail('walk');
    await register(email);
    await expect(page.locator('.nav .who').textContent()).resolves.toBe(email);

    // A post: created as a draft, then published.
    const tag = `e2e-${suite}`;
    const title = `Field notes ${suite}`;
    await page.getByLabel('Title').fill(title);
    await page.getByLabel('Text').fill('Ten or more characters of a body, written in the browser.');
    await page.getByLabel('Tags').fill(`${tag}, Browser`);
    await page.getByRole('button', { name: 'Save draft' }).click();
    const postId = await page.locator('li[data-post-id]', { hasText: title }).getAttribute('data-post-id');
    const item = page.locator(`li[data-post-id="${postId}"]`);
    await item.locator('.badge', { hasText: 'Draft' }).waitFor();
    await item.getByRole('button', { name: 'Publish' }).click();
    await item.locator('.badge', { hasText: 'Published' }).waitFor();
    await screenshot(page, '02-my-posts');

    // Edit it.
    await item.getByRole('button', { name: 'Edit' }).click();
    await item.getByLabel('Title').fill(`${title} (edited)`);
    await item.getByRole('button', { name: 'Save changes' }).click();
    await item.getByRole('heading', { name: `${title} (edited)` }).waitFor();

    // Found by its tag among the published posts, and opened.
    await follow('Posts', 'Posts');
    await page.getByRole('textbox', { name: 'Tag' }).fill(tag);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('heading', { name: `Posts tagged #${tag}` }).waitFor();
    await page.locator('.page-of').getByText('Page 1 of 1 · 1 post').waitFor();
    await expect(page.locator('.post-card').count()).resolves.toBe(1);
    await screenshot(page, '03-posts-by-tag');
    await page.getByRole('link', { name: `${title} (edited)` }).click();
    await page.getByRole('heading', { name: `${title} (edited)`, level: 1 }).waitFor();
    await expect(page.locator('.tags').textContent()).resolves.toContain('#browser');
    await screenshot(page, '04-one-post');

    // Unpublish it, then delete it (the confirm dialog is accepted).
    await follow('My posts', 'My posts');
    await item.getByRole('button', { name: 'Unpublish' }).click();
    await item.locator('.badge', { hasText: 'Draft' }).waitFor();
    const published = await fetch(`${origin}/api/posts?tag=${tag}`);
    expect(((await published.json()) as { total: number }).total).toBe(0);
    await item.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('You have not written a post yet.').waitFor();

    // A note with a file: the bytes go from the browser to storage, never through the gateway.
    const finished: Request[] = [];
    page.on('requestfinished', (request) => finished.push(request));
    const bytes = randomBytes(384 * 1024);
    await follow('Notes', 'Notes');
    await page.getByLabel('Title').fill('Scan of the receipt');
    await page.getByLabel('Text').fill('Kept for the tax return.');
    await page
      .getByLabel('Attachment (optional)')
      .setInputFiles({ name: 'receipt.png', mimeType: 'image/png', buffer: bytes });
    // Every text the progress bar's label shows, in order.
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { progressTexts: string[] }).progressTexts = seen;
      new MutationObserver(() => {
        const text = document.querySelector('.progress-text')?.textContent;
        if (text && text !== seen.at(-1)) seen.push(text);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await page.getByRole('button', { name: 'Save note' }).click();
    await page.getByText('Note saved.').waitFor();
    const progressTexts = await page.evaluate(() => (window as unknown as { progressTexts: string[] }).progressTexts);
    expect(progressTexts.at(-1)).toBe('receipt.png: 384.0 KB uploaded');
    expect(progressTexts.some((text) => /^\d+(\.\d)? (B|KB) of 384\.0 KB sent$/.test(text))).toBe(true);
    await page.locator('.progress').waitFor({ state: 'visible' });
    await expect(page.locator('progress').evaluate((bar: HTMLProgressElement) => bar.value === bar.max)).resolves.toBe(
      true,
    );
    await screenshot(page, '05-notes');

    // One PUT, to storage's origin; nothing the page sent to the gateway could have held the file
    // (its bodies are JSON of at most 100 kB; the file is 384 kB).
    const puts = finished.filter((r) => r.method() === 'PUT').map((r) => new URL(r.url()));
    expect(puts).toHaveLength(1);
    expect(puts[0]?.origin).toBe(new URL(storageSettings.endpoint).origin);
    expect(puts[0]?.pathname).toMatch(new RegExp(`^/${storageSettings.bucket}/uploads/[0-9a-f-]{36}\\.png$`));
    const toGateway = finished.filter((r) => r.url().startsWith(origin) && r.method() !== 'GET');
    expect(toGateway.map((r) => r.headers()['content-type'])).toEqual(['application/json', 'application/json']);
    expect(toGateway.every((r) => (r.postData() ?? '').length < 1024)).toBe(true);

    // Download through the signed link: the very bytes.
    const note = page.locator('li[data-note-id]', { hasText: 'Scan of the receipt' });
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      note.getByRole('button', { name: 'Download receipt.png' }).click(),
    ]);
    expect(download.url().startsWith(storageSettings.endpoint)).toBe(true);
    // Saved under the name it was uploaded with, which the list shows with its size and type.
    expect(download.suggestedFilename()).toBe('receipt.png');
    await expect(note.locator('.attachment').textContent()).resolves.toBe('File: receipt.png (384.0 KB, image/png)');
    expect((await readFile((await download.path()) as string)).equals(bytes)).toBe(true);
    const key = /uploads\/[^?]+/.exec(download.url())?.[0] as string;
    expect((await storage.headObject(key))?.size).toBe(bytes.length);

    // Edit the note: new title, same file.
    const noteId = await note.getAttribute('data-note-id');
    const edited = page.locator(`li[data-note-id="${noteId}"]`);
    await edited.getByRole('button', { name: 'Edit' }).click();
    await edited.getByLabel('Title').fill('Scan of the receipt, March');
    await edited.getByRole('button', { name: 'Save changes' }).click();
    await edited.getByRole('heading', { name: 'Scan of the receipt, March' }).waitFor();
    await edited.getByRole('button', { name: 'Download receipt.png' }).waitFor();

    // Delete the note: it is gone from the page, and its object from storage soon after.
    await edited.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No notes yet.').waitFor();
    await eventually(
      "the deleted note's object removed from storage",
      () => storage.headObject(key),
      (head) => head === undefined,
      { timeoutMs: 10_000 },
    );

    // Log out: the session is over on the server, and a reload finds none.
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('link', { name: 'Log in' }).waitFor();
    // The server clears the session's cookie as it ends the session, a moment after the screen
    // changed. The device's cookie stays: it is what lets this browser's next login go first
    // while a crowd of wrong logins runs (identity's device tokens).
    await eventually(
      'the session cookie cleared, the device cookie kept',
      () => context.cookies(),
      (cookies) => cookies.map((c) => c.name).join() === 'cs_device',
    );
    await page.reload();
    await page.getByRole('link', { name: 'Log in' }).waitFor();
    await page.goto(`${origin}/#/notes`);
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    await expect(page.getByRole('alert').textContent()).resolves.toBe('Please log in first.');
  });

  it('pages through the published posts of a tag with Older and Newer', async () => {
    const tag = `paged-${suite}`;
    const res = await fetch(`${origin}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: newEmail('pager'), password: 'correct horse battery' }),
    });
    const auth = {
      authorization: `Bearer ${((await res.json()) as { token: string }).token}`,
      'content-type': 'application/json',
    };
    for (let i = 1; i <= 12; i++) {
      const created = await fetch(`${origin}/api/posts`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ title: `Paged post ${i}`, body: 'A body long enough to pass.', tags: [tag] }),
      });
      const { _id } = (await created.json()) as { _id: string };
      await fetch(`${origin}/api/posts/${_id}`, {
        method: 'PUT',
        headers: auth,
        body: JSON.stringify({ status: 'published' }),
      });
    }

    await openPage(`${origin}/#/?tag=${tag}`);
    await page.getByRole('heading', { name: `Posts tagged #${tag}` }).waitFor();
    await page.locator('.page-of').getByText('Page 1 of 2 · 12 posts').waitFor();
    await expect(page.locator('.post-card h2').allTextContents()).resolves.toEqual(
      Array.from({ length: 10 }, (_, i) => `Paged post ${12 - i}`),
    );
    await expect(page.getByRole('link', { name: '← Newer' }).isVisible()).resolves.toBe(false);
    await page.getByRole('link', { name: 'Older →' }).click();
    await page.locator('.page-of').getByText('Page 2 of 2 · 12 posts').waitFor();
    await expect(page.locator('.post-card h2').allTextContents()).resolves.toEqual(['Paged post 2', 'Paged post 1']);
    await expect(page.getByRole('link', { name: 'Older →' }).isVisible()).resolves.toBe(false);
    await screenshot(page, '10-posts-page-2');
    await page.getByRole('link', { name: '← Newer' }).click();
    await page.locator('.page-of').getByText('Page 1 of 2 · 12 posts').waitFor();
  });

  it('shows the newest 20 notes, and the older ones when asked', async () => {
    await openPage();
    const email = newEmail('many-notes');
    await register(email);
    // The page's token is its own, in memory: the test logs in beside it for one of its own.
    const { token } = (await (
      await fetch(`${origin}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password: 'correct horse battery' }),
      })
    ).json()) as { token: string };
    for (let i = 1; i <= 23; i++) {
      const created = await fetch(`${origin}/api/notes`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: `Note number ${i}` }),
      });
      expect(created.status).toBe(201);
    }

    await follow('Notes', 'Notes');
    const titles = page.locator('li[data-note-id] h3');
    await titles.nth(19).waitFor();
    expect(await titles.count()).toBe(20);
    expect(await titles.first().textContent()).toBe('Note number 23');
    await page.getByRole('button', { name: 'Show older notes' }).click();
    await titles.nth(22).waitFor();
    await expect(titles.allTextContents()).resolves.toEqual(
      Array.from({ length: 23 }, (_, i) => `Note number ${23 - i}`),
    );
    await page.getByRole('button', { name: 'Show older notes' }).waitFor({ state: 'hidden' });
  });

  it('an invalid post shows the validation messages beside its fields, and nothing is created', async () => {
    await openPage();
    await register(newEmail('invalid'));
    await page.getByLabel('Title').fill('   ');
    await page.getByLabel('Text').fill('too short');
    await page.getByRole('button', { name: 'Save draft' }).click();

    const form = page.locator('form', { has: page.getByRole('heading', { name: 'New post' }) });
    await form.locator('.field-error[data-field="title"]').getByText('Title is required').waitFor();
    await expect(form.locator('.field-error[data-field="body"]').textContent()).resolves.toBe(
      'Text must be at least 10 characters',
    );
    await expect(form.locator('[aria-invalid="true"]').count()).resolves.toBe(2);
    await expectPlainWords(await form.getByRole('alert').textContent());
    await page.getByText('You have not written a post yet.').waitFor();
    await screenshot(page, '06-validation-messages');
  });

  it('when storage does not allow the page’s origin, the upload fails visibly and no note is saved', async () => {
    await openPage(`${origin.replace('127.0.0.1', 'localhost')}/`);
    await register(newEmail('cors'));
    await follow('Notes', 'Notes');
    await page.getByLabel('Title').fill('Should not be saved');
    await page.getByLabel('Attachment (optional)').setInputFiles({
      name: 'a.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from('refused by CORS'),
    });
    await page.getByRole('button', { name: 'Save note' }).click();

    const alert = page.locator('form').getByRole('alert');
    await alert.getByText('The file could not be sent to storage').waitFor();
    await expectPlainWords(await alert.textContent());
    await page.getByText('No notes yet.').waitFor();
    await screenshot(page, '07-upload-refused-by-cors');
  });

  it('API errors read as words: a wrong password, a taken address', async () => {
    await openPage();
    const email = newEmail('words');
    await register(email);
    await page.getByRole('button', { name: 'Log out' }).click();

    await follow('Log in', 'Log in');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').getByText('Invalid credentials.').waitFor();
    await screenshot(page, '08-login-refused');

    await follow('Create an account', 'Create an account');
    await page.getByLabel('E-mail').fill(email.toUpperCase());
    await page.getByLabel('Password').fill('another password');
    await page.getByRole('button', { name: 'Create account' }).click();
    const alert = page.getByRole('alert');
    await alert.getByText(/already registered/i).waitFor();
    await expectPlainWords(await alert.textContent());
  });

  it('a session ended from another device sends the person back to the login screen by itself, and logging in returns them where they were', async () => {
    await openPage();
    const email = newEmail('ended');
    await register(email);
    await follow('Notes', 'Notes');
    await page.locator('#live[data-status="live"]').waitFor();
    await logOutEverywhereElsewhere(email);

    // Nothing clicked: the page's live stream learns it (its token is checked each second).
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    await expect(page.getByRole('alert').textContent()).resolves.toBe('Your session has ended. Please log in again.');
    await screenshot(page, '09-session-ended');

    await logIn(email);
    await page.getByRole('heading', { name: 'Notes', level: 1 }).waitFor();
  });

  it('a session ended that the live stream and a request learn at once sends the person to log in once, and back to where they were', async () => {
    await openPage();
    const email = newEmail('twice');
    await register(email);
    await page.locator('#live[data-status="live"]').waitFor();
    // The refresh the stream asks for once its token is revoked is held, so that the Notes list,
    // asked for meanwhile, learns that the session is over with it.
    let refreshSent = false;
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route('**/api/auth/refresh', async (route) => {
      refreshSent = true;
      await held;
      await route.continue();
    });
    await logOutEverywhereElsewhere(email);
    await eventually(
      'the stream renewing its token',
      async () => refreshSent,
      (sent) => sent,
    );
    const refused = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/notes' && r.status() === 401);
    await page.getByRole('link', { name: 'Notes', exact: true }).click();
    await refused;
    release();

    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    await expect(page.getByRole('alert').textContent()).resolves.toBe('Your session has ended. Please log in again.');
    await logIn(email);
    await page.getByRole('heading', { name: 'Notes', level: 1 }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/notes');
  });
});
