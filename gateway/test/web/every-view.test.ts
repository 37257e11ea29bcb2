/**
 * Every screen of the web client, in a real headless Chromium against the real system, at a
 * phone's width (375 px) and a desktop's (1280 px): each has a title of its own, fits the width,
 * speaks in plain words, loads nothing that is missing, and passes axe-core with no serious or
 * critical violation. Then the forms as a keyboard and screen-reader user meets them: every
 * field's error at once and marked, the focus somewhere useful after each action, no message
 * left over from before, tags that can be edited, and a page past the last that says so.
 * Screenshots of every screen at both widths go to test-artifacts/web/views (not committed).
 */
import { readFileSync } from 'node:fs';
import { eventually } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page, Request, Route } from 'playwright-core';
import { type BrowserSuite, screenshot, startBrowserSuite } from './browser';

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const WIDTHS = [
  { name: 'phone', width: 375, height: 740 },
  { name: 'desktop', width: 1280, height: 900 },
] as const;

let web: BrowserSuite;
/** A published post of the suite's, for the screen of one post. */
let postId: string;
/** Its author (with no display name), for the screen of an author's posts. */
let authorId: string;
const postTitle = 'Walking the coast path';

async function api(path: string, body: unknown, token?: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${web.origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

beforeAll(async () => {
  web = await startBrowserSuite('web-views');
  const { token } = (await api('/api/auth/register', {
    email: `author-${web.id}@example.com`,
    password: 'correct horse battery',
  })) as { token: string };
  const post = await api('/api/posts', { title: postTitle, body: 'Three days, and every one of them windy.' }, token);
  postId = post._id as string;
  authorId = post.authorId as string;
  const res = await fetch(`${web.origin}/api/posts/${postId}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ status: 'published' }),
  });
  expect(res.status).toBe(200);
}, 90_000);

afterAll(async () => {
  await web?.stop();
});

/** A context whose pages let axe-core's script in (the page's own policy allows none inline). */
async function newPage(viewport: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
  const context = await web.browser.newContext({ viewport, bypassCSP: true });
  context.setDefaultTimeout(20_000);
  return { context, page: await context.newPage() };
}

async function register(page: Page, label: string): Promise<void> {
  await page.goto(`${web.origin}/#/register`);
  await page.getByLabel('E-mail').fill(`${label}-${web.id}@example.com`);
  await page.getByLabel('Password').fill('correct horse battery');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { name: 'My posts', level: 1 }).waitFor();
}

interface Violation {
  id: string;
  impact: string;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's serious and critical violations on the page as it is. */
async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ content: AXE });
  const violations = await page.evaluate(async () => {
    const run = (window as unknown as { axe: { run(): Promise<{ violations: Violation[] }> } }).axe.run;
    return (await run()).violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** What each screen is called, by its address; signed-in screens after the public ones. */
const PUBLIC = [
  { hash: '#/', heading: 'Posts' },
  { hash: () => `#/posts/${postId}`, heading: postTitle },
  { hash: () => `#/authors/${authorId}`, heading: 'Posts by anonymous' },
  { hash: '#/login', heading: 'Log in' },
  { hash: '#/register', heading: 'Create an account' },
  { hash: '#/forgot-password', heading: 'Forgot password' },
  { hash: '#/reset-password?token=0.x&email=someone%40example.com', heading: 'Set a new password' },
  // The pages of the e-mails' links, as they open: asking to confirm, having sent nothing.
  { hash: '#/verify-email?token=0x', heading: 'Verify your e-mail address' },
  { hash: '#/confirm-email-change?token=0x', heading: 'Confirm your new e-mail address' },
  { hash: '#/nowhere', heading: 'Page not found' },
];
const SIGNED_IN = [
  { hash: '#/mine', heading: 'My posts' },
  { hash: '#/notes', heading: 'Notes' },
  // Looked at once its list is in: this device's row, with its mark.
  { hash: '#/sessions', heading: 'Sessions', ready: '.badge.current' },
  // Looked at once the linked providers are listed (none: it says so).
  { hash: '#/account', heading: 'Account', ready: 'ul[aria-label="Linked providers"] li' },
];

describe('every screen, at 375 px and 1280 px', () => {
  it.each(WIDTHS)(
    'at the $name width ($width px): its own title, fits, plain words, nothing missing, no serious axe violation',
    async ({ name, width, height }) => {
      const { context, page } = await newPage({ width, height });
      const missing: string[] = [];
      page.on('response', (res) => {
        if (res.status() === 404) missing.push(res.url());
      });
      const titles = new Set<string>();
      const problems: string[] = [];
      const look = async (hash: string, heading: string, ready?: string) => {
        await page.goto(`${web.origin}/${hash}`);
        await page.getByRole('heading', { name: heading, level: 1, exact: true }).waitFor();
        if (ready) await page.locator(ready).first().waitFor();
        // The title follows the heading; a screen that fills in (one post) gets it once loaded.
        await page.waitForFunction((h) => document.title === `${h} · Content service`, heading);
        titles.add(await page.title());
        // Loaded: no screen says it is still loading (the live stream keeps the network busy).
        await page.getByText('Loading…').waitFor({ state: 'detached' });
        const text = await page.locator('body').textContent();
        if (/\btokens?\b/i.test(text ?? '')) problems.push(`${hash}: says "token": ${text}`);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        if (overflow > 0) problems.push(`${hash}: ${overflow} px wider than the screen`);
        for (const v of await seriousViolations(page)) problems.push(`${hash}: ${v}`);
        await screenshot(page, `views/${name}-${heading.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`);
      };
      for (const view of PUBLIC) await look(typeof view.hash === 'function' ? view.hash() : view.hash, view.heading);
      await register(page, `views-${name}`);
      for (const view of SIGNED_IN) await look(view.hash, view.heading, 'ready' in view ? view.ready : undefined);

      // The notes screen with a file sent: the progress bar keeps a readable width.
      await page.goto(`${web.origin}/#/notes`);
      await page.getByRole('heading', { name: 'Notes', level: 1, exact: true }).waitFor();
      await page.getByLabel('Title').fill('A scan');
      await page.getByLabel('Attachment (optional)').setInputFiles({
        name: 'a-rather-long-file-name-for-a-phone.png',
        mimeType: 'image/png',
        buffer: Buffer.alloc(4096, 1),
      });
      await page.getByRole('button', { name: 'Save note' }).click();
      await page.getByText('Note saved.').waitFor();
      const bar = await page.locator('progress').boundingBox();
      expect(bar?.width ?? 0).toBeGreaterThanOrEqual(Math.min(width - 100, 180));
      for (const v of await seriousViolations(page)) problems.push(`#/notes with a note: ${v}`);
      await screenshot(page, `views/${name}-notes-with-a-file`);

      expect(problems).toEqual([]);
      expect(titles.size).toBe(PUBLIC.length + SIGNED_IN.length);
      expect(missing).toEqual([]);
      // The page names its icon, which is there (headless Chromium asks for none by itself).
      const icon = await page.locator('link[rel="icon"]').getAttribute('href');
      const got = await fetch(new URL(icon ?? '/favicon.ico', web.origin));
      expect({ status: got.status, type: got.headers.get('content-type') }).toEqual({
        status: 200,
        type: 'image/svg+xml',
      });
      await context.close();
    },
    120_000,
  );
});

describe('forms, as a keyboard and screen-reader user meets them', () => {
  let context: BrowserContext;
  let page: Page;
  beforeAll(async () => {
    ({ context, page } = await newPage({ width: 1280, height: 900 }));
    await register(page, 'forms');
  });
  afterAll(async () => {
    await context?.close();
  });

  const focused = () =>
    page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      return el === document.body || !el ? 'body' : `${el.tagName.toLowerCase()}: ${el.textContent?.trim()}`;
    });

  it('a post with several mistakes: every field says what is wrong at once, and is marked invalid', async () => {
    await page.getByLabel('Title').fill('   ');
    await page.getByLabel('Text').fill('short');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByText('Please correct the highlighted fields.').waitFor();
    await expect(page.getByLabel('Title').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(page.getByLabel('Text').getAttribute('aria-invalid')).resolves.toBe('true');
    const shown = await page.locator('.field-error:not([hidden])').allTextContents();
    expect(shown).toHaveLength(2);
  });

  it('a saved draft: the focus goes to the message, which goes once the form is changed again', async () => {
    await page.getByLabel('Title').fill('First draft');
    await page.getByLabel('Text').fill('Enough words to be a post.');
    await page.getByLabel('Tags').fill('travel');
    await page.getByRole('button', { name: 'Save draft' }).click();
    const saved = page.getByText('Draft saved. Publish it when it is ready.');
    await saved.waitFor();
    await expect(focused()).resolves.toBe('div: Draft saved. Publish it when it is ready.');
    await page.getByLabel('Title').fill('Second');
    await saved.waitFor({ state: 'hidden' });
  });

  it('when a draft is saved and then published, then "Draft saved" is gone', async () => {
    await page.getByLabel('Title').fill('Soon public');
    await page.getByLabel('Text').fill('Enough words to be a post.');
    await page.getByRole('button', { name: 'Save draft' }).click();
    const saved = page.getByText('Draft saved. Publish it when it is ready.');
    await saved.waitFor();

    const item = page.locator('li[data-post-id]', { hasText: 'Soon public' });
    await item.getByRole('button', { name: 'Publish' }).click();
    await item.locator('.badge', { hasText: 'Published' }).waitFor();

    await expect(saved.count()).resolves.toBe(0);
  });

  it('when a tag breaks the contract’s rule, then the form says so at the Tags field before any request', async () => {
    const posted: string[] = [];
    const record = (request: { method(): string; url(): string }) => {
      if (request.method() !== 'GET' && new URL(request.url()).pathname.startsWith('/api/posts'))
        posted.push(request.url());
    };
    page.on('request', record);
    await page.getByLabel('Title').fill('Tagged badly');
    await page.getByLabel('Text').fill('Enough words to be a post.');
    const tags = page.getByRole('textbox', { name: 'Tags' });
    await tags.fill('travel, café');
    await page.getByRole('button', { name: 'Save draft' }).click();

    const error = page.locator('.field-error[data-field="tags"]:not([hidden])');
    await error.waitFor();
    await expect(error.textContent()).resolves.toBe(
      '“café” cannot be a tag: only letters a to z, digits and hyphens, up to 40.',
    );
    await expect(tags.getAttribute('aria-invalid')).resolves.toBe('true');
    page.off('request', record);
    expect(posted).toEqual([]);
  });

  it('when the title and the tags are edited, then the save is one PATCH of both; after saving, the focus is on the post; after a delete, on the list', async () => {
    const id = await page.locator('li[data-post-id]', { hasText: 'First draft' }).getAttribute('data-post-id');
    const item = page.locator(`li[data-post-id="${id}"]`);
    // Cancel draws the post again, and the focus goes to its heading.
    await item.getByRole('button', { name: 'Edit' }).click();
    await item.getByRole('button', { name: 'Cancel' }).click();
    await expect(focused()).resolves.toMatch(/^h3: First draft/);
    await item.getByRole('button', { name: 'Edit' }).click();
    await expect(item.getByLabel('Tags').inputValue()).resolves.toBe('travel');
    await item.getByLabel('Title').fill('First draft, edited');
    await item.getByLabel('Tags').fill('travel, coast');
    // Every write the save sends: one request, so the text and the tags cannot be saved apart.
    // (Its body is a stream to the browser, which does not show it: what it did shows below.)
    const writes: string[] = [];
    const onRequest = (request: Request) => {
      const { pathname } = new URL(request.url());
      if (request.method() !== 'GET' && pathname.startsWith('/api/posts'))
        writes.push(`${request.method()} ${pathname}`);
    };
    page.on('request', onRequest);
    await item.getByRole('button', { name: 'Save changes' }).click();
    await item.locator('.tags', { hasText: '#coast' }).waitFor();
    page.off('request', onRequest);
    expect(writes).toEqual([`PATCH /api/posts/${id}`]);
    await expect(item.locator('.tags li').allTextContents()).resolves.toEqual(['#travel', '#coast']);
    await expect(item.locator('h3').textContent()).resolves.toMatch(/^First draft, edited/);
    await expect(focused()).resolves.toMatch(/^h3: First draft/);

    page.once('dialog', (dialog) => void dialog.accept());
    await item.getByRole('button', { name: 'Delete' }).click();
    await item.waitFor({ state: 'detached' });
    await expect(focused()).resolves.toBe('h2: Your posts');
  });

  it('posts say who wrote them: “anonymous” until the author gives a name, then the name; never an address', async () => {
    await page.goto(`${web.origin}/#/`);
    await page.locator('li.post-card', { hasText: postTitle }).locator('.meta', { hasText: 'by anonymous' }).waitFor();

    // The account's name arrives after the person began to type: what they typed stays.
    const held: Route[] = [];
    await page.route('**/api/auth/me', (route) => {
      if (route.request().method() === 'GET') held.push(route);
      else void route.continue();
    });
    await page.getByRole('link', { name: 'My posts', exact: true }).click();
    await page.getByLabel('Name shown on your posts').fill('Ada L.');
    await eventually(
      'the account read, held',
      async () => held.length,
      (n) => n > 0,
    );
    for (const route of held) await route.continue();
    await page.unroute('**/api/auth/me');
    await page.locator('form[aria-labelledby="name-heading"]:not([aria-busy])').waitFor();
    await expect(page.getByLabel('Name shown on your posts').inputValue()).resolves.toBe('Ada L.');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByText('Your posts now say “by Ada L.”.').waitFor();
    await page.getByLabel('Title').fill('Named post');
    await page.getByLabel('Text').fill('Written by someone with a name.');
    await page.getByRole('button', { name: 'Save draft' }).click();
    const item = page.locator('li[data-post-id]', { hasText: 'Named post' });
    await item.getByRole('button', { name: 'Publish' }).click();
    await item.locator('.badge', { hasText: 'Published' }).waitFor();

    await page.goto(`${web.origin}/#/`);
    const card = page.locator('li.post-card', { hasText: 'Named post' });
    await card.locator('.meta', { hasText: 'by Ada L.' }).waitFor();
    await expect(page.locator('.results').textContent()).resolves.not.toContain('@');
    await card.getByRole('link', { name: 'Named post' }).click();
    await page.locator('article .meta', { hasText: 'by Ada L.' }).waitFor();
  });

  it('a page past the last says so, and links to the last one', async () => {
    await page.goto(`${web.origin}/#/?page=999`);
    const said = page.locator('.results p.empty');
    await said.waitFor();
    await expect(said.textContent()).resolves.toBe('There is no page 999; the last page is 1. Go to page 1');
    await said.getByRole('link', { name: 'Go to page 1' }).click();
    await page.getByRole('link', { name: postTitle }).waitFor();
  });
});

describe('the header and the focus ring', () => {
  it('at 375 px, signed in, the header takes two rows: the name and the live mark, then the links', async () => {
    const { context, page } = await newPage({ width: 375, height: 740 });
    await register(page, 'header-rows');

    const rows = await page.evaluate(() => {
      const bar = document.querySelector('header.bar') as HTMLElement;
      const parts = Array.from(bar.children).flatMap((child) =>
        child.id === 'nav' ? Array.from(child.children) : [child],
      );
      const tops = parts
        .filter((part) => (part as HTMLElement).offsetParent !== null)
        .map((part) => Math.round(part.getBoundingClientRect().top));
      // Parts whose tops are within a few pixels of each other sit on one row.
      return tops.sort((a, b) => a - b).filter((top, i, all) => i === 0 || top - (all[i - 1] as number) > 6).length;
    });
    await screenshot(page, 'views/phone-header');
    await context.close();

    expect(rows).toBe(2);
  });

  it('the focus ring stands out 3:1 from what it is drawn on, on the page and on the dark bar', async () => {
    const { context, page } = await newPage({ width: 1280, height: 900 });
    await page.goto(`${web.origin}/#/login`);
    await page.getByRole('heading', { name: 'Log in', level: 1 }).waitFor();

    const contrasts: Record<string, number> = {};
    const rings = {
      'a field': page.getByLabel('E-mail'),
      'the main button': page.getByRole('button', { name: 'Log in' }),
      'a link on the bar': page.locator('#nav').getByRole('link', { name: 'Register' }),
    };
    for (const [what, element] of Object.entries(rings)) {
      await element.focus();
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Tab');
      contrasts[what] = await element.evaluate((focused) => {
        const rgb = (color: string) => (color.match(/[\d.]+/g) ?? []).map(Number);
        const luminance = ([r = 0, g = 0, b = 0]: number[]) => {
          const [R, G, B] = [r, g, b].map((c) => {
            const v = c / 255;
            return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
          });
          return 0.2126 * (R as number) + 0.7152 * (G as number) + 0.0722 * (B as number);
        };
        // The ring is drawn outside the element: on the first ancestor with a background.
        let under = focused.parentElement;
        while (under && (rgb(getComputedStyle(under).backgroundColor)[3] ?? 1) === 0) under = under.parentElement;
        const ring = luminance(rgb(getComputedStyle(focused).outlineColor));
        const ground = luminance(rgb(under ? getComputedStyle(under).backgroundColor : 'rgb(255, 255, 255)'));
        return (Math.max(ring, ground) + 0.05) / (Math.min(ring, ground) + 0.05);
      });
    }
    await context.close();

    for (const [what, contrast] of Object.entries(contrasts)) {
      expect({ what, atLeast3: contrast >= 3 }).toEqual({ what, atLeast3: true });
    }
  });
});
