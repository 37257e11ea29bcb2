/**
 * The search boxes of the web client, in a real headless Chromium against the real system: on the
 * public list, results come while typing (a prefix finds a post, and what does not match goes), a
 * slow answer to words typed earlier never replaces the newer one's, the pages of a search keep
 * it, an emptied box is the normal list again, and a search the API refuses says why. On notes,
 * the box finds the caller's own note, and never another person's.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { type BrowserSuite, callApi, screenshot, startBrowserSuite } from './browser';

let web: BrowserSuite;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  web = await startBrowserSuite('web-search');
}, 90_000);

afterAll(async () => {
  await web?.stop();
});

afterEach(async () => {
  await context?.close();
});

const call = (path: string, method: string, body: unknown, token?: string) => callApi(web, path, method, body, token);

/** An account, through the API; its token. */
async function account(label: string): Promise<string> {
  const email = `${label}-${web.id}-${randomBytes(3).toString('hex')}@example.com`;
  const { token } = await call('/api/auth/register', 'POST', { email, password: 'correct horse battery' });
  return token as string;
}

/** A published post, through the API. */
async function publish(token: string, title: string, body: string): Promise<void> {
  const created = await call('/api/posts', 'POST', { title, body }, token);
  await call(`/api/posts/${created._id}`, 'PUT', { status: 'published' }, token);
}

/** A word of this run's alone, letters only (as words are), so that only this test's posts match it. */
const unique = (stem: string) =>
  `${stem}${[...randomBytes(5)].map((byte) => String.fromCharCode(97 + (byte % 26))).join('')}`;

async function open(hash: string): Promise<void> {
  context = await web.browser.newContext({ viewport: { width: 1100, height: 800 } });
  context.setDefaultTimeout(10_000);
  page = await context.newPage();
  await page.goto(`${web.origin}/${hash}`);
}

const titles = () => page.locator('.post-card h2').allTextContents();

describe('the search boxes of the web client, in Chromium, against the real system', () => {
  it('when words are typed into the public list’s search box, then the matching post shows while typing and the others go; emptied, the list is whole again', async () => {
    const token = await account('writer');
    const word = unique('harbour');
    await publish(token, `Gazpacho by the ${word}`, `A cold soup, eaten at the ${word}.`);
    await publish(token, `Bouillabaisse by the ${word}`, `A fish stew, eaten at the ${word}.`);
    await publish(token, 'Nothing to do with it', 'A post that no search of this test finds.');
    await open('#/');
    const other = page.locator('.post-card h2', { hasText: 'Nothing to do with it' });
    await other.waitFor();

    const box = page.getByRole('searchbox', { name: 'Search posts' });
    // Letter by letter, as a person types: the results come before the word is finished.
    await box.pressSequentially(`${word} gazp`, { delay: 30 });
    await page.getByRole('status').getByText(`1 post found for “${word} gazp”.`).waitFor();
    await expect(titles()).resolves.toEqual([`Gazpacho by the ${word}`]);
    await screenshot(page, 'search-posts');

    await box.fill(word);
    await page.getByRole('status').getByText(`2 posts found for “${word}”.`).waitFor();
    await expect(titles().then((shown) => shown.sort())).resolves.toEqual([
      `Bouillabaisse by the ${word}`,
      `Gazpacho by the ${word}`,
    ]);

    await box.fill('');
    await other.waitFor();
    await expect(page.getByRole('status').filter({ hasText: 'found for' }).count()).resolves.toBe(0);
  });

  it('when an earlier search’s answer comes after a later one’s, then the later one’s results stay', async () => {
    const token = await account('late');
    const word = unique('lagoon');
    await publish(token, `Oysters of the ${word}`, 'A post the slow search finds.');
    await publish(token, `Mussels of the ${word}`, 'A post the quick search finds.');
    await open('#/');
    // The first search's request waits 1.5 s before it goes to the gateway: its answer comes last.
    await page.route(
      (url) => url.pathname === '/api/posts' && url.searchParams.get('q') === `${word} oyst`,
      async (route) => {
        await sleep(1_500);
        await route.continue();
      },
    );
    const slow = page.waitForResponse((response) => new URL(response.url()).searchParams.get('q') === `${word} oyst`);

    const box = page.getByRole('searchbox', { name: 'Search posts' });
    await box.fill(`${word} oyst`);
    await sleep(400); // past the debounce: the slow search is asked
    await box.fill(`${word} muss`);
    await page.getByRole('status').getByText(`1 post found for “${word} muss”.`).waitFor();
    await slow;
    await sleep(200);

    await expect(titles()).resolves.toEqual([`Mussels of the ${word}`]);
    await expect(page.getByRole('status').filter({ hasText: 'found for' }).textContent()).resolves.toBe(
      `1 post found for “${word} muss”.`,
    );
  });

  it('when a search has more than one page, then its pages keep it; and a search over 10 words says why it is refused', async () => {
    const token = await account('many');
    const word = unique('archipelago');
    for (let n = 1; n <= 11; n++) await publish(token, `Island ${n} of the ${word}`, 'One of many islands.');
    await open('#/');
    const box = page.getByRole('searchbox', { name: 'Search posts' });
    await box.fill(word);
    await page.locator('.page-of').getByText('Page 1 of 2 · 11 posts').waitFor();

    await page.getByRole('link', { name: 'Next →' }).click();
    await page.locator('.page-of').getByText('Page 2 of 2 · 11 posts').waitFor();
    expect(new URL(page.url()).hash).toBe(`#/?q=${word}&page=2`);
    await expect(page.getByRole('searchbox', { name: 'Search posts' }).inputValue()).resolves.toBe(word);
    await expect(page.locator('.post-card').count()).resolves.toBe(1);

    await page
      .getByRole('searchbox', { name: 'Search posts' })
      .fill('one two three four five six seven eight nine ten eleven');
    await page
      .locator('form.search')
      .getByRole('alert')
      .getByText('Q must be at most 200 characters and 10 words.')
      .waitFor();
    await expect(page.locator('.post-card').count()).resolves.toBe(0);
  });

  it('when the caller searches their notes, then their own note is found, and another person’s with the same word is not', async () => {
    const word = unique('timetable');
    const stranger = await account('stranger');
    await call(
      '/api/notes',
      'POST',
      { title: `Someone else’s ${word}`, body: 'Never found by anyone but its owner.' },
      stranger,
    );

    await open('#/register');
    await page.getByLabel('E-mail').fill(`notes-${web.id}@example.com`);
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'My posts', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'Notes', exact: true }).click();
    await page.getByRole('heading', { name: 'Notes', exact: true, level: 1 }).waitFor();
    for (const [title, body] of [
      ['Ferry', `The ${word} of the ferry to the islands.`],
      ['Groceries', 'Bread, cheese, olives.'],
    ] as const) {
      await page.getByLabel('Title').fill(title);
      await page.getByLabel('Text').fill(body);
      await page.getByRole('button', { name: 'Save note' }).click();
      await page.locator('li[data-note-id] h3', { hasText: title }).waitFor();
    }

    await page.getByRole('searchbox', { name: 'Search your notes' }).pressSequentially(word.slice(0, 7), { delay: 30 });
    await page
      .getByRole('status')
      .getByText(`1 note found for “${word.slice(0, 7)}”.`)
      .waitFor();
    await expect(page.locator('li[data-note-id] h3').allTextContents()).resolves.toEqual(['Ferry']);
    await screenshot(page, 'search-notes');
  });
});
