/**
 * The account's address in the web client, in a real headless Chromium against the real system and
 * its real SMTP server (Mailpit): the banner that asks to verify it until the e-mail's link is
 * followed and confirmed, that opening the link alone (as a mail scanner does) changes nothing, and
 * changing the address from the account's settings.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { waitForMail } from '@cs/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { type BrowserSuite, screenshot, startBrowserSuite } from './browser';

const PASSWORD = 'correct horse battery';
let web: BrowserSuite;
let context: BrowserContext;

beforeAll(async () => {
  web = await startBrowserSuite('address', { AUTH_RATE_LIMIT: '0' });
}, 90_000);
afterAll(async () => {
  await web?.stop();
});
afterEach(async () => {
  await context?.close();
});

const newEmail = (label: string) => `${label}-${web.id}-${randomBytes(3).toString('hex')}@example.com`;

async function openPage(at: string): Promise<Page> {
  context = await web.browser.newContext({ viewport: { width: 1000, height: 760 } });
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  await page.goto(at);
  return page;
}

async function register(page: Page, email: string): Promise<void> {
  await page.goto(`${web.origin}/#/register`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { name: 'My posts', level: 1 }).waitFor();
}

/** The link of the newest e-mail to `email` (since `since`) that opens `page` of the web client. */
async function linkIn(email: string, page: string, since?: Date): Promise<string> {
  const mail = await waitForMail(email, since ? { since } : {});
  const link = new RegExp(`(http://\\S+#/${page}\\?token=[\\w.-]+)`).exec(mail.text)?.[1];
  if (!link) throw new Error(`no ${page} link in: ${mail.text}`);
  return link;
}

/** The account as the API sees it, through a login of its own. */
async function account(email: string): Promise<{ status: number; emailVerified?: boolean }> {
  const login = await fetch(`${web.origin}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  if (login.status !== 200) return { status: login.status };
  const { token } = (await login.json()) as { token: string };
  const me = await fetch(`${web.origin}/api/auth/me`, { headers: { authorization: `Bearer ${token}` } });
  return { status: me.status, ...((await me.json()) as { emailVerified: boolean }) };
}

const banner = (page: Page) => page.getByRole('region', { name: 'Your address is not verified' });

describe('verifying the address', () => {
  it('when a person registers, then a banner asks them to verify; sending the link again within the minute says when they may; following the link and pressing Confirm verifies the address and the banner goes', async () => {
    const email = newEmail('banner');
    const page = await openPage(`${web.origin}/`);
    await register(page, email);
    await banner(page).getByText(`Please verify your e-mail address, ${email}`).waitFor();
    const link = await linkIn(email, 'verify-email');
    expect(link.startsWith(`${web.origin}/#/verify-email?token=`)).toBe(true);

    // Registration sent the first mail a moment ago: the next one must wait, and the banner says how long.
    await banner(page).getByRole('button', { name: 'Send the link again' }).click();
    await banner(page)
      .getByRole('status')
      .filter({ hasText: /Please wait \d+ seconds/ })
      .waitFor();
    await screenshot(page, 'verify-banner');

    await page.goto(link);
    await page.getByRole('heading', { name: 'Verify your e-mail address', level: 1 }).waitFor();
    // The token left the address bar as soon as the screen had it.
    expect(page.url()).toBe(`${web.origin}/#/verify-email`);
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: `Your address ${email} is verified.` })
      .waitFor();
    await banner(page).waitFor({ state: 'detached' });
    await expect(account(email)).resolves.toMatchObject({ status: 200, emailVerified: true });

    // After a reload too, the session says so: no banner.
    await page.goto(`${web.origin}/#/mine`);
    await page.reload();
    await page.getByRole('heading', { name: 'My posts', level: 1 }).waitFor();
    await page.locator('.nav .who').filter({ hasText: email }).waitFor();
    expect(await banner(page).count()).toBe(0);

    // The same link again: used up, said in terms of the link.
    await page.goto(link);
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'This link has expired, was already used, or a newer one was sent.' })
      .waitFor();
  });

  it('when the link is only opened, as a mail scanner does, then nothing changes until the person presses Confirm', async () => {
    const email = newEmail('scanner');
    const res = await fetch(`${web.origin}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(res.status).toBe(201);
    const link = await linkIn(email, 'verify-email');

    // A scanner's GET of the link, and a scanner that runs the page's script.
    expect((await fetch(link)).status).toBe(200);
    const page = await openPage(link);
    await page.getByRole('heading', { name: 'Verify your e-mail address', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Confirm' }).waitFor();
    // Time for anything the page might send on its own (the live stream keeps the network busy, so
    // there is no idle moment to wait for).
    await sleep(1_000);
    await expect(account(email)).resolves.toMatchObject({ status: 200, emailVerified: false });

    // The person, in another tab, later: the link still works.
    const person = await context.newPage();
    await person.goto(link);
    await person.getByRole('button', { name: 'Confirm' }).click();
    await person
      .getByRole('alert')
      .filter({ hasText: `Your address ${email} is verified.` })
      .waitFor();
    await person.getByRole('link', { name: 'Log in' }).last().waitFor();
    await expect(account(email)).resolves.toMatchObject({ status: 200, emailVerified: true });
  });
});

describe('changing the address', () => {
  it('when a person changes it in the account settings (a wrong password first), follows the link sent to the new address and confirms, then they log in with the new address only', async () => {
    const old = newEmail('old');
    const next = newEmail('next');
    const page = await openPage(`${web.origin}/`);
    await register(page, old);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    await page.getByText(`You log in with ${old}.`).waitFor();

    await page.getByLabel('New e-mail address').fill(next);
    await page.getByLabel('Your password').fill('not the password');
    await page.getByRole('button', { name: 'Change my address' }).click();
    await page.getByRole('alert').filter({ hasText: 'That password is not right.' }).waitFor();
    // A wrong password ends no session.
    await page.locator('.nav .who').filter({ hasText: old }).waitFor();

    const since = new Date();
    await page.getByLabel('New e-mail address').fill(next);
    await page.getByLabel('Your password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Change my address' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: `We e-mailed a link to ${next}.` })
      .waitFor();
    await screenshot(page, 'email-change-asked');
    // Nothing changes until the link is followed.
    await expect(account(old)).resolves.toMatchObject({ status: 200 });

    const link = await linkIn(next, 'confirm-email-change', since);
    expect(link.startsWith(`${web.origin}/#/confirm-email-change?token=`)).toBe(true);
    await page.goto(link);
    await page.getByRole('heading', { name: 'Confirm your new e-mail address', level: 1 }).waitFor();
    expect(page.url()).toBe(`${web.origin}/#/confirm-email-change`);
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: `Your account’s address is now ${next}.` })
      .waitFor();

    await expect(account(old)).resolves.toEqual({ status: 401 });
    await expect(account(next)).resolves.toMatchObject({ status: 200, emailVerified: true });
    // This browser confirmed: its session is the one kept, and it goes by the new address.
    await page.locator('.nav .who').filter({ hasText: next }).waitFor();
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.goto(`${web.origin}/#/login`);
    await page.getByLabel('E-mail').fill(next);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'My posts', level: 1 }).waitFor();
    await page.locator('.nav .who').filter({ hasText: next }).waitFor();
    expect(await banner(page).count()).toBe(0);
  });
});
