/**
 * Sign-in with an OpenID Connect provider in Chromium, against the whole real system and the test
 * run's real provider (the certified oidc-provider, in test mode): the browser goes to our `start`,
 * fills the provider's login page, and lands on the redirect with `#code=` (or `#error=`), which
 * the test exchanges with the verifier it kept, as a client would. Linking, the pre-hijacking
 * takeover, unlinking and the failures of the flow, each as a browser meets them.
 */
import { createHash, randomBytes } from 'node:crypto';
import { eventually, TEST_OIDC_OTHER_CLIENT, testOidcSettings } from '@cs/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { type BrowserSuite, startBrowserSuite } from './browser';

const PASSWORD = 'correct horse battery';
let web: BrowserSuite;
let origin: string;
let landing: string;
let context: BrowserContext | undefined;

beforeAll(async () => {
  web = await startBrowserSuite('oidc', testOidcSettings());
  ({ origin } = web);
  landing = `${origin}/signed-in`;
  await eventually(
    'the provider discovered',
    async () => (await fetch(`${origin}/api/auth/providers`)).json(),
    (list) => JSON.stringify(list) === JSON.stringify([{ id: 'test', name: 'Test' }]),
    { timeoutMs: 20_000 },
  );
}, 90_000);
afterAll(async () => {
  await web?.stop();
});
afterEach(async () => {
  await context?.close();
  context = undefined;
});

interface Person {
  name: string;
  email?: string;
  verified?: boolean;
}

let people = 0;
/** Someone the provider has not seen: a name of their own, and an address of their own unless given. */
function person(verified = true, email?: string): Person {
  people += 1;
  return { name: `Person ${web.id} ${people}`, email: email ?? `oidc-${web.id}-${people}@example.com`, verified };
}

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

const startUrl = (challenge: string, redirect = landing) =>
  `${origin}/api/auth/oidc/test/start?${new URLSearchParams({ redirect, challenge })}`;

async function newTab(): Promise<Page> {
  if (!context) {
    context = await web.browser.newContext();
    context.setDefaultTimeout(10_000);
  }
  return context.newPage();
}

/** On the provider's login page: who signs in, and what the provider says of the address. */
async function logInAtProvider(page: Page, { name, email, verified }: Person): Promise<void> {
  await page.getByLabel('Name').fill(name);
  if (email) await page.getByLabel('E-mail', { exact: true }).fill(email);
  if (verified) await page.getByLabel('E-mail verified').check();
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Waits for the landing page, and reads its fragment. */
async function landed(page: Page): Promise<{ code?: string; error?: string }> {
  await page.waitForURL((url) => url.href.startsWith(`${landing}#`));
  return Object.fromEntries(new URLSearchParams(new URL(page.url()).hash.slice(1)));
}

/**
 * A whole sign-in, up to the landing page, in a browser of its own: in one that signed in at the
 * provider before, the provider remembers who it was and asks no one.
 */
async function signInInBrowser(who: Person, challenge = pkce().challenge) {
  const own = await web.browser.newContext();
  own.setDefaultTimeout(10_000);
  try {
    const page = await own.newPage();
    await page.goto(startUrl(challenge));
    await logInAtProvider(page, who);
    return await landed(page);
  } finally {
    await own.close();
  }
}

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
const exchange = (code: string | undefined, verifier: string) => post('/api/auth/oidc/exchange', { code, verifier });
const get = (path: string, token: string) =>
  fetch(`${origin}${path}`, { headers: { authorization: `Bearer ${token}` } });
const idOf = (token: string) =>
  (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { id: string }).id;

/** A sign-in exchanged: the session. */
async function signIn(who: Person): Promise<{ token: string; refreshToken: string; emailVerified: boolean }> {
  const { verifier, challenge } = pkce();
  const { code, error } = await signInInBrowser(who, challenge);
  expect(error).toBeUndefined();
  const res = await exchange(code, verifier);
  expect(res.status).toBe(200);
  return (await res.json()) as { token: string; refreshToken: string; emailVerified: boolean };
}

describe('sign-in with a provider, in Chromium', () => {
  it('when a new person signs in, then the browser lands with a code, and the code buys a session of a verified account', async () => {
    const who = person();

    const session = await signIn(who);

    expect(session).toEqual({
      token: expect.any(String),
      refreshToken: expect.any(String),
      expiresIn: expect.any(Number),
      emailVerified: true,
    });
    const me = await get('/api/auth/me', session.token);
    expect(await me.json()).toMatchObject({ email: who.email, emailVerified: true });
  });

  it('when two flows run in two tabs, then each lands with its own code, and each code buys a session', async () => {
    const who = person();
    const tabs = [pkce(), pkce()];
    const pages = [await newTab(), await newTab()];
    for (const [i, page] of pages.entries()) await page.goto(startUrl(tabs[i]?.challenge as string));
    for (const page of pages) await logInAtProvider(page, who);
    const codes = await Promise.all(pages.map(async (page) => (await landed(page)).code));

    const answers = await Promise.all(codes.map((code, i) => exchange(code, tabs[i]?.verifier as string)));

    expect(answers.map((res) => res.status)).toEqual([200, 200]);
  });

  it('when a second provider identity vouches for a verified account’s address, then it is linked to that account', async () => {
    const first = person();
    const owner = await signIn(first);

    const second = await signIn({ ...person(), email: first.email });

    expect(idOf(second.token)).toBe(idOf(owner.token));
    const identities = (await (await get('/api/auth/identities', owner.token)).json()) as unknown[];
    expect(identities).toHaveLength(2);
  });

  it('when the provider does not vouch for an address in use, then the browser lands with #error=email_in_use', async () => {
    const email = `in-use-${web.id}-${randomBytes(3).toString('hex')}@example.com`;
    expect((await post('/api/auth/register', { email, password: PASSWORD })).status).toBe(201);

    expect(await signInInBrowser(person(false, email))).toEqual({ error: 'email_in_use' });
  });

  it('when the provider vouches for the address of an account registered before its owner came, then the owner takes it over', async () => {
    const email = `hijack-${web.id}-${randomBytes(3).toString('hex')}@example.com`;
    const early = (await (await post('/api/auth/register', { email, password: PASSWORD })).json()) as {
      token: string;
      refreshToken: string;
    };

    const owner = await signIn(person(true, email));

    expect(idOf(owner.token)).toBe(idOf(early.token));
    expect((await post('/api/auth/login', { email, password: PASSWORD })).status).toBe(401);
    const refresh = await post('/api/auth/refresh', { refreshToken: early.refreshToken });
    expect(refresh.status).toBe(401);
    expect(await refresh.json()).toEqual({ error: 'Invalid or expired refresh token' });
    await eventually(
      'the early access token refused',
      async () => (await get('/api/auth/me', early.token)).status,
      (status) => status === 401,
    );
  });

  it('when an identity is unlinked, then 204 while another way to log in is left, and 409 for the last one', async () => {
    const first = person();
    const session = await signIn(first);
    await signIn({ ...person(), email: first.email });
    const [one, two] = (await (await get('/api/auth/identities', session.token)).json()) as { _id: string }[];
    const unlink = (id: string | undefined) =>
      fetch(`${origin}/api/auth/identities/${id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${session.token}` },
      });

    expect((await unlink(one?._id)).status).toBe(204);
    const last = await unlink(two?._id);
    expect(last.status).toBe(409);
    expect(await last.json()).toEqual({
      error:
        'This is the last way to log in to the account: set a password, or link another provider, before unlinking it.',
    });
  });
});

describe('the failures of a sign-in, in Chromium', () => {
  it('when the provider is unknown, the challenge missing or the redirect elsewhere, then the page is the error', async () => {
    const page = await newTab();
    const { challenge } = pkce();
    const cases: [string, number, string][] = [
      [
        `${origin}/api/auth/oidc/nosuch/start?${new URLSearchParams({ redirect: landing, challenge })}`,
        404,
        'There is no sign-in provider by that name.',
      ],
      [
        `${origin}/api/auth/oidc/test/start?${new URLSearchParams({ redirect: landing })}`,
        400,
        'challenge is required',
      ],
      [startUrl(challenge, 'https://evil.example/'), 400, 'redirect must be a page of the web client'],
    ];
    for (const [url, status, message] of cases) {
      const res = await page.goto(url);
      expect(res?.status()).toBe(status);
      expect(JSON.parse((await page.locator('body').textContent()) ?? '').error).toContain(message);
    }
  });

  it('when the callback is replayed, or its state is unknown, then 400; the code still works once, and not twice', async () => {
    const page = await newTab();
    const { verifier, challenge } = pkce();
    let callbackUrl = '';
    page.on('request', (request) => {
      if (request.url().includes('/api/auth/oidc/test/callback')) callbackUrl = request.url();
    });
    await page.goto(startUrl(challenge));
    await logInAtProvider(page, person());
    const { code } = await landed(page);

    const replay = await page.goto(callbackUrl);
    expect(replay?.status()).toBe(400);
    const unknown = await page.goto(`${origin}/api/auth/oidc/test/callback?state=nosuch&code=x`);
    expect(unknown?.status()).toBe(400);
    expect(JSON.parse((await page.locator('body').textContent()) ?? '')).toEqual({
      error: 'This sign-in is unknown, has expired or was completed already. Start it again.',
    });
    const wrong = await exchange(code, pkce().verifier);
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toEqual({
      error: 'This sign-in code was not started by this client: the verifier does not match its challenge.',
    });
    // The wrong verifier used it up: the right one comes too late.
    const late = await exchange(code, verifier);
    expect(late.status).toBe(400);
    expect(await late.json()).toEqual({
      error: 'This sign-in code is not valid: it was used already, has expired, or never existed.',
    });
  });

  it('when a code is used twice, then the second exchange is 400', async () => {
    const { verifier, challenge } = pkce();
    const { code } = await signInInBrowser(person(), challenge);
    expect((await exchange(code, verifier)).status).toBe(200);

    const again = await exchange(code, verifier);

    expect(again.status).toBe(400);
    expect(await again.json()).toEqual({
      error: 'This sign-in code is not valid: it was used already, has expired, or never existed.',
    });
  });

  it('when the provider made the code for another client, then the browser lands with #error=provider_error', async () => {
    const started = await fetch(startUrl(pkce().challenge), { redirect: 'manual' });
    const authorization = new URL(started.headers.get('location') as string);
    // Our state and callback, but another application registered at the same provider.
    authorization.searchParams.set('client_id', TEST_OIDC_OTHER_CLIENT.id);
    const page = await newTab();

    await page.goto(authorization.href);
    await logInAtProvider(page, person());

    expect(await landed(page)).toEqual({ error: 'provider_error' });
  });
});
