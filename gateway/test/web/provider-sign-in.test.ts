/**
 * "Sign in with …" in the web client, in a real headless Chromium against the real system and the
 * test run's real OpenID Connect provider: the button, the provider's page, and back to a signed-in
 * page by full-page redirects; a sign-in the API turns down, said in a sentence; and the flow's
 * verifier, kept in localStorage only while the person is away, with the challenge made from it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { testOidcSettings } from '@cs/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { type BrowserSuite, screenshot, startBrowserSuite } from './browser';

const FLOWS = 'content-service.sign-in.';
let web: BrowserSuite;
let context: BrowserContext;

beforeAll(async () => {
  web = await startBrowserSuite('provider', testOidcSettings());
}, 90_000);
afterAll(async () => {
  await web?.stop();
});
afterEach(async () => {
  await context?.close();
});

async function loginPage(): Promise<Page> {
  context = await web.browser.newContext({ viewport: { width: 1000, height: 760 } });
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  await page.goto(`${web.origin}/#/login`);
  await page.getByRole('heading', { name: 'Log in', level: 1 }).waitFor();
  return page;
}

/** A person at the provider whom no other test is. */
function person(label: string): { name: string; email: string } {
  const name = `${label}-${web.id}-${randomBytes(3).toString('hex')}`;
  return { name, email: `${name}@example.com` };
}

/** The provider's login page, as a person fills it in. */
async function atProvider(page: Page, who: { name: string; email: string }, verified: boolean): Promise<void> {
  await page.getByRole('heading', { name: 'Sign in to the test provider' }).waitFor();
  await page.getByLabel('Name').fill(who.name);
  await page.getByLabel('E-mail', { exact: true }).fill(who.email);
  if (verified) await page.getByLabel('E-mail verified').check();
  await page.getByRole('button', { name: 'Sign in' }).click();
}

const flowsKept = (page: Page) =>
  page.evaluate((prefix) => Object.keys(localStorage).filter((key) => key.startsWith(prefix)), FLOWS);

describe('sign-in with a provider', () => {
  it('Sign in with Test button: the provider’s page, and back signed in, with nothing of the flow left in the address or in storage', async () => {
    const page = await loginPage();
    const who = person('button');
    await page.getByRole('button', { name: 'Sign in with Test' }).click();
    await atProvider(page, who, true);

    await page.getByRole('heading', { name: 'My posts', level: 1 }).waitFor();
    await page.locator('.nav .who').filter({ hasText: who.email }).waitFor();
    // The code left the address, and the flow's key with it; the verifier is spent.
    expect(page.url()).toBe(`${web.origin}/#/mine`);
    expect(await flowsKept(page)).toEqual([]);
    // A provider that vouched for the address: nothing to verify.
    expect(await page.getByRole('region', { name: 'Your address is not verified' }).count()).toBe(0);
    await screenshot(page, 'provider-signed-in');

    // The session is this browser's, as a login's: it outlives a reload.
    await page.reload();
    await page.locator('.nav .who').filter({ hasText: who.email }).waitFor();
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('list', { name: 'Linked providers' }).getByText('Test').waitFor();
  });

  it('when the provider gives an address an account already uses, unproven, then the login screen says so in a sentence, and no one is signed in', async () => {
    const who = person('taken');
    const registered = await fetch(`${web.origin}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: who.email, password: 'correct horse battery' }),
    });
    expect(registered.status).toBe(201);
    const page = await loginPage();
    await page.getByRole('button', { name: 'Sign in with Test' }).click();
    await atProvider(page, who, false);

    await page.getByRole('heading', { name: 'Log in', level: 1 }).waitFor();
    await page
      .getByRole('alert')
      .filter({ hasText: 'An account already uses the e-mail address this provider gave' })
      .waitFor();
    expect(page.url()).toBe(`${web.origin}/#/login`);
    expect(await page.getByRole('button', { name: 'Log out' }).count()).toBe(0);
    expect(await flowsKept(page)).toEqual([]);
    await screenshot(page, 'provider-email-in-use');
  });

  it('the button keeps a verifier under a flow key of its own, sends its S256 challenge, and drops flows left from long ago', async () => {
    const page = await loginPage();
    // A flow begun a day ago, in a tab closed on the provider's page.
    await page.evaluate((key) => localStorage.setItem(key, `${Date.now() - 86_400_000}.stale`), `${FLOWS}old`);
    // A navigation answered 204 goes nowhere: the page stays, and its storage can be read.
    await page.route('**/api/auth/oidc/test/start**', (route) => route.fulfill({ status: 204 }));
    const [request] = await Promise.all([
      page.waitForRequest('**/api/auth/oidc/test/start**'),
      page.getByRole('button', { name: 'Sign in with Test' }).click(),
    ]);
    const start = new URL(request.url());

    const flow = new URL(start.searchParams.get('redirect') ?? '').searchParams.get('flow') ?? '';
    expect(await flowsKept(page)).toEqual([`${FLOWS}${flow}`]);
    const verifier = ((await page.evaluate((key) => localStorage.getItem(key), `${FLOWS}${flow}`)) ?? '').split('.')[1];
    expect(verifier).toMatch(/^[A-Za-z0-9._~-]{43,128}$/);
    expect(start.searchParams.get('challenge')).toBe(
      createHash('sha256')
        .update(verifier ?? '')
        .digest('base64url'),
    );
  });
});
