/**
 * The web client's session in Chromium, against the real system: its refresh token lives in an
 * HttpOnly cookie that page script cannot read, the session outlives a reload and reaches a second
 * tab, two tabs taking it up at once both stay signed in, the sessions screen marks this browser's
 * own session and names each device, sessions can be ended one by one, and "Log out everywhere"
 * ends them all. A visitor who is not signed in is sent no refusal on a first load.
 */
import { randomBytes } from 'node:crypto';
import { eventually } from '@cs/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { type BrowserSuite, screenshot, startBrowserSuite } from './browser';

const PASSWORD = 'correct horse battery';
const FIREFOX_ON_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0';
let web: BrowserSuite;
let origin: string;
let context: BrowserContext;

beforeAll(async () => {
  web = await startBrowserSuite('sessions', { AUTH_RATE_LIMIT: '0' });
  ({ origin } = web);
}, 90_000);
afterAll(async () => {
  await web?.stop();
});
afterEach(async () => {
  await context?.close();
});

async function newTab(at = `${origin}/`): Promise<Page> {
  const page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
  await page.goto(at);
  return page;
}

const signedInAs = (page: Page) => page.locator('.nav .who').textContent();

async function register(page: Page, email: string): Promise<void> {
  await page.getByRole('link', { name: 'Register', exact: true }).click();
  await page.getByRole('heading', { name: 'Create an account', level: 1 }).waitFor();
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { name: 'My posts', level: 1 }).waitFor();
}

/** Another device's login, through the API's JSON form, with its User-Agent. */
async function loginElsewhere(
  email: string,
  userAgent = 'another device',
): Promise<{ token: string; refreshToken: string }> {
  const res = await fetch(`${origin}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': userAgent },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { token: string; refreshToken: string };
}

describe('the web client’s session, in Chromium', () => {
  it('keeps its refresh token in an HttpOnly cookie, lasts across a reload and into a second tab, and two tabs taking it up at once both stay signed in', async () => {
    context = await web.browser.newContext({ viewport: { width: 1100, height: 800 } });
    context.setDefaultTimeout(10_000);
    const email = `tabs-${randomBytes(4).toString('hex')}@example.com`;
    const first = await newTab();
    await register(first, email);

    const cookies = await context.cookies();
    // The session's refresh token, and the device token its logins give back (identity's device
    // tokens): both where no script can read them, sent only to /api/auth.
    const named = cookies.map(({ name, path, httpOnly, sameSite }) => ({ name, path, httpOnly, sameSite }));
    expect(named.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: 'cs_device', path: '/api/auth', httpOnly: true, sameSite: 'Strict' },
      { name: 'cs_refresh', path: '/api/auth', httpOnly: true, sameSite: 'Strict' },
    ]);
    const seenByScript = await first.evaluate(() => ({
      cookie: document.cookie,
      stored: [...Object.values(sessionStorage), ...Object.values(localStorage)].join(' '),
    }));
    expect(seenByScript.cookie).toBe('');
    for (const { value } of cookies) expect(seenByScript.stored).not.toContain(value);

    await first.reload();
    await first.getByRole('heading', { name: 'Posts', level: 1 }).waitFor();
    await expect(signedInAs(first)).resolves.toBe(email);

    const second = await newTab(`${origin}/#/notes`);
    await second.getByRole('heading', { name: 'Notes', level: 1 }).waitFor();
    await expect(signedInAs(second)).resolves.toBe(email);

    // Two more tabs at the same moment: both refresh with the one cookie, and neither logs the other out.
    const [third, fourth] = await Promise.all([newTab(`${origin}/#/mine`), newTab(`${origin}/#/notes`)]);
    await third.getByRole('heading', { name: 'My posts', level: 1 }).waitFor();
    await fourth.getByRole('heading', { name: 'Notes', level: 1 }).waitFor();
    await first.reload();
    await first.getByRole('heading', { name: 'Posts', level: 1 }).waitFor();
    await expect(signedInAs(first)).resolves.toBe(email);
    await screenshot(first, '20-signed-in-after-reload');
  });

  it('when the sessions screen lists this browser’s session and a newer one of another device, then it marks this one “This device” and names each device in words', async () => {
    context = await web.browser.newContext({ viewport: { width: 1100, height: 800 } });
    context.setDefaultTimeout(10_000);
    const email = `this-device-${randomBytes(4).toString('hex')}@example.com`;
    const page = await newTab();
    await register(page, email);
    // Logged in after this browser: the newest of the two, listed first.
    await loginElsewhere(email, FIREFOX_ON_WINDOWS);

    await page.getByRole('link', { name: 'Sessions', exact: true }).click();
    await page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor();
    const items = page.getByRole('list', { name: 'Sessions' }).getByRole('listitem');
    await items.nth(1).waitFor();

    const rows = await items.evaluateAll((lis) =>
      lis.map((li) => ({
        device: li.querySelector('strong')?.textContent,
        userAgent: li.querySelector('strong')?.getAttribute('title'),
        thisDevice: li.textContent?.includes('This device'),
        when: li.querySelector('.meta')?.textContent,
      })),
    );
    const ownAgent = await page.evaluate(() => navigator.userAgent);
    expect(rows).toEqual([
      {
        device: 'Firefox on Windows',
        userAgent: FIREFOX_ON_WINDOWS,
        thisDevice: false,
        when: 'Logged in just now, last active just now',
      },
      { device: 'Chrome on Linux', userAgent: ownAgent, thisDevice: true, when: 'Logged in just now, active now' },
    ]);
    await expect(page.getByRole('list', { name: 'Sessions' }).textContent()).resolves.not.toContain('(newest)');
    await screenshot(page, '22-sessions-this-device');
  });

  it('when the sessions screen stays open, then its times are told again as they pass, with no reload', async () => {
    context = await web.browser.newContext({ viewport: { width: 1100, height: 800 } });
    context.setDefaultTimeout(10_000);
    // The page's clock only: the servers keep real time, so the page sees its sessions age.
    await context.clock.install({ time: Date.now() });
    const email = `times-${randomBytes(4).toString('hex')}@example.com`;
    const page = await newTab();
    await register(page, email);
    await loginElsewhere(email, FIREFOX_ON_WINDOWS);
    await page.getByRole('link', { name: 'Sessions', exact: true }).click();
    const other = page
      .getByRole('list', { name: 'Sessions' })
      .getByRole('listitem')
      .filter({ hasNot: page.locator('.badge.current') });
    await expect(other.locator('.meta').textContent()).resolves.toBe('Logged in just now, last active just now');

    // The page's clock stood still from its install, before the sessions began (the seconds the
    // login took, more under load): three and a half minutes on it are three whole minutes past
    // them as long as that took under 30 s.
    await page.clock.runFor('03:30');

    await expect(other.locator('.meta').textContent()).resolves.toBe(
      'Logged in 3 minutes ago, last active 3 minutes ago',
    );
  });

  it('lists the sessions, ends another one alone, and "Log out everywhere" ends this one and the other tab’s', async () => {
    context = await web.browser.newContext({ viewport: { width: 1100, height: 800 } });
    context.setDefaultTimeout(10_000);
    const email = `everywhere-${randomBytes(4).toString('hex')}@example.com`;
    const page = await newTab();
    await register(page, email);
    const other = await loginElsewhere(email);

    await page.getByRole('link', { name: 'Sessions', exact: true }).click();
    await page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor();
    const items = page.getByRole('list', { name: 'Sessions' }).getByRole('listitem');
    await items.nth(1).waitFor();
    await expect(items.count()).resolves.toBe(2);
    await screenshot(page, '21-sessions');

    // The newest is the other device's (its User-Agent names no browser): end it alone.
    const another = items.filter({ hasText: 'Unknown device' });
    await another.getByRole('button', { name: 'End this session' }).click();
    await another.waitFor({ state: 'detached' });
    await expect(items.count()).resolves.toBe(1);
    const refreshed = await fetch(`${origin}/api/auth/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refreshToken: other.refreshToken }),
    });
    expect(refreshed.status).toBe(401);

    const tab = await newTab(`${origin}/#/notes`);
    await tab.getByRole('heading', { name: 'Notes', level: 1 }).waitFor();
    const probe = await loginElsewhere(email);
    await page.getByRole('button', { name: 'Log out everywhere' }).click();
    await page.getByRole('heading', { name: 'Log in', level: 1 }).waitFor();
    await expect(page.getByRole('alert').textContent()).resolves.toBe('You are logged out everywhere.');
    // Once a token issued before it is refused on the way the other tab's next call takes (the
    // gateway, then posts), so is that tab's: revocation reaches each process within a second or so.
    await eventually(
      'a token from before "Log out everywhere" refused',
      async () =>
        (await fetch(`${origin}/api/posts/my-posts`, { headers: { authorization: `Bearer ${probe.token}` } })).status,
      (status) => status === 401,
    );

    // The other tab's next call finds its session over, and sends the person to log in.
    await tab.getByRole('link', { name: 'My posts', exact: true }).click();
    await tab.getByRole('heading', { name: 'Log in', level: 1 }).waitFor();
    await expect(tab.getByRole('alert').textContent()).resolves.toBe('Your session has ended. Please log in again.');
    await tab.reload();
    await tab.getByRole('link', { name: 'Log in', exact: true }).waitFor();
    await expect(tab.locator('.nav .who').count()).resolves.toBe(0);
  });
});

describe('a visitor who is not signed in, in Chromium', () => {
  /** Every answer of 400 or more, and every request that failed, on `page` from now on. */
  const failuresOn = (page: Page) => {
    const failed: string[] = [];
    page.on('response', (res) => {
      if (res.status() >= 400) failed.push(`${res.status()} ${res.request().method()} ${res.url()}`);
    });
    page.on('requestfailed', (req) => failed.push(`${req.failure()?.errorText} ${req.method()} ${req.url()}`));
    return failed;
  };
  /** The first load is over: the screen is drawn, signed out, and the live stream is up. */
  const loaded = async (page: Page) => {
    await page.getByRole('heading', { name: 'Posts', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'Log in', exact: true }).waitFor();
    await page.locator('#live[data-status="live"]').waitFor();
  };

  it('when a visitor who never logged in opens the web client, then no request it makes fails, nor does a new tab’s after a login and a logout', async () => {
    context = await web.browser.newContext({ viewport: { width: 1100, height: 800 } });
    context.setDefaultTimeout(10_000);
    const first = await context.newPage();
    const failed = failuresOn(first);

    await first.goto(`${origin}/`);
    await loaded(first);

    expect(failed).toEqual([]);

    // Signing in and out reopens the live stream (the old one is aborted on purpose): the new tab
    // after it is what counts.
    await register(first, `visitor-${randomBytes(4).toString('hex')}@example.com`);
    await first.getByRole('button', { name: 'Log out' }).click();
    await first.getByRole('link', { name: 'Log in', exact: true }).waitFor();
    const again = await context.newPage();
    const failedAgain = failuresOn(again);
    const refreshes: string[] = [];
    again.on('request', (req) => {
      if (new URL(req.url()).pathname === '/api/auth/refresh') refreshes.push(req.url());
    });

    await again.goto(`${origin}/`);
    await loaded(again);

    expect({ failedAgain, refreshes }).toEqual({ failedAgain: [], refreshes: [] });
  });
});
