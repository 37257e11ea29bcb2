/**
 * The author page of the web client, in a real headless Chromium against the real system: from a
 * post, the author's name leads to that author's published posts, and to no one else's, in the
 * order the person picks.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { type BrowserSuite, callApi, screenshot, startBrowserSuite } from './browser';

let web: BrowserSuite;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  web = await startBrowserSuite('web-authors');
}, 90_000);

afterAll(async () => {
  await web?.stop();
});

afterEach(async () => {
  await context?.close();
});

const call = (path: string, method: string, body: unknown, token?: string) => callApi(web, path, method, body, token);

/** An account with a display name, through the API; its token. */
async function author(label: string, displayName: string): Promise<string> {
  const email = `${label}-${web.id}@example.com`;
  const { token } = await call('/api/auth/register', 'POST', { email, password: 'correct horse battery', displayName });
  return token as string;
}

/** A post of the account's, published unless it is to stay a draft; its id. */
async function post(token: string, title: string, status: 'draft' | 'published' = 'published'): Promise<string> {
  const created = await call('/api/posts', 'POST', { title, body: 'A body long enough to be a post.' }, token);
  if (status === 'published') await call(`/api/posts/${created._id}`, 'PUT', { status }, token);
  return created._id as string;
}

describe('the author page, in Chromium, against the real system', () => {
  it('when the author’s name on a post is followed, then the author page lists that author’s published posts, and not another author’s nor a draft; then by title when asked', async () => {
    const name = `Ada ${web.id}`;
    const ada = await author('ada', name);
    const bea = await author('bea', `Bea ${web.id}`);
    const first = await post(ada, 'Cherry pie');
    await post(bea, 'Bea’s own post');
    await post(ada, 'apple tart');
    await post(ada, 'A draft of Ada’s', 'draft');
    await post(ada, 'Banana bread');

    context = await web.browser.newContext({ viewport: { width: 1100, height: 800 } });
    context.setDefaultTimeout(10_000);
    page = await context.newPage();
    await page.goto(`${web.origin}/#/posts/${first}`);
    await page.getByRole('heading', { name: 'Cherry pie', level: 1 }).waitFor();
    await page.locator('article .meta').getByRole('link', { name, exact: true }).click();

    await page.getByRole('heading', { name: `Posts by ${name}`, level: 1, exact: true }).waitFor();
    await page.locator('.page-of').getByText('Page 1 of 1 · 3 posts').waitFor();
    await expect(page.locator('.post-card h2').allTextContents()).resolves.toEqual([
      'Banana bread',
      'apple tart',
      'Cherry pie',
    ]);
    await expect(page.locator('.results').textContent()).resolves.not.toContain('Bea');
    await screenshot(page, 'author-page');

    await page.getByLabel('Order').selectOption({ label: 'Title (A to Z)' });
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/sort=title/);
    await page.locator('.page-of').getByText('Page 1 of 1 · 3 posts').waitFor();
    await expect(page.locator('.post-card h2').allTextContents()).resolves.toEqual([
      'apple tart',
      'Banana bread',
      'Cherry pie',
    ]);
  });
});
