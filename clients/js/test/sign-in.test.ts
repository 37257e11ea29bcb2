/**
 * Signing in with a provider through the client library, in Node, against the whole real system
 * and the test run's real OpenID Connect provider (its login driven by the test kit, as a browser
 * would): the address `beginSignIn` gives, what `finishSignIn` makes of the page the person comes
 * back to, two flows at once, a flow begun in another browser, and the linked identities.
 */
import type { RunningSystem } from '@cs/devstack';
import {
  eventually,
  type ProviderLogin,
  signInAtProvider,
  startTestSystem,
  TEST_FRONTEND_ORIGIN,
  testOidcSettings,
} from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type ApiError, createContentClient, SignInError } from '../src/index.js';

let system: RunningSystem;
let base: string;
/** Where the person comes back to: a page of the web client (on FRONTEND_ORIGIN, which the API allows). */
const back = `${TEST_FRONTEND_ORIGIN}/signed-in?from=test`;

beforeAll(async () => {
  system = await startTestSystem({
    env: testOidcSettings(),
  });
  base = system.gatewayUrl;
  await eventually(
    'the test provider discovered',
    () => createContentClient({ baseUrl: base }).providers(),
    (providers) => providers.length === 1,
    // Discovery runs at the start, and again after a while for a provider that had not answered.
    { timeoutMs: 20_000 },
  );
}, 60_000);
afterAll(async () => {
  await system?.stop();
});

/** A client whose every request is counted, by method and path. */
function counted() {
  const sent: string[] = [];
  const client = createContentClient({
    baseUrl: base,
    fetch: ((request: Request) => {
      sent.push(`${request.method} ${new URL(request.url).pathname}`);
      return fetch(request);
    }) as typeof fetch,
  });
  return { client, sent };
}

let people = 0;
/** A person at the provider whom no other test is. */
const person = (verified: boolean): ProviderLogin => {
  people += 1;
  const name = `client-${process.pid}-${Date.now()}-${people}`;
  return { name, email: `${name}@example.com`, verified };
};

/**
 * What the browser goes through from the start address: our start, the provider's login, our
 * callback; where it lands, with `#code=` or `#error=`.
 */
async function throughProvider(start: string, login: ProviderLogin): Promise<string> {
  const toProvider = await fetch(start, { redirect: 'manual' });
  expect(toProvider.status).toBe(302);
  const callback = await signInAtProvider(toProvider.headers.get('location') ?? '', login);
  const landing = await fetch(callback, { redirect: 'manual' });
  expect(landing.status).toBe(303);
  return landing.headers.get('location') ?? '';
}

/** The flow key and challenge of a start address, and where it sends the person back. */
function parts(start: string) {
  const url = new URL(start);
  const redirect = new URL(url.searchParams.get('redirect') ?? '');
  return { url, redirect, flow: redirect.searchParams.get('flow'), challenge: url.searchParams.get('challenge') };
}

describe('a whole sign-in', () => {
  it('when a person signs in at the provider and comes back, then finishSignIn keeps the session as a login does, with the account’s address; its identity is listed, and unlinking the last way to log in is an ApiError 409', async () => {
    expect(await createContentClient({ baseUrl: base }).providers()).toEqual([{ id: 'test', name: 'Test' }]);
    const { client, sent } = counted();
    const login = person(true);
    const landing = await throughProvider(await client.beginSignIn('test', { redirect: back }), login);
    expect(landing.startsWith(`${back}&flow=`)).toBe(true);
    expect(new URL(landing).hash).toMatch(/^#code=/);

    sent.length = 0;
    const session = await client.finishSignIn(landing);
    expect(sent).toEqual(['POST /api/auth/oidc/exchange', 'GET /api/auth/me']);
    expect(session).toMatchObject({ email: login.email, emailVerified: true, refreshToken: expect.any(String) });
    expect(client.session()).toEqual(session);
    expect(await client.account.me()).toMatchObject({ email: login.email, emailVerified: true });

    const identities = await client.account.identities();
    expect(identities).toEqual([
      { _id: expect.any(String), provider: 'test', email: login.email, createdAt: expect.any(String) },
    ]);
    const last = await client.account.unlinkIdentity(identities[0]?._id ?? '').catch((e: unknown) => e);
    expect(last).toMatchObject({ kind: 'api', name: 'ApiError', status: 409, message: expect.any(String) });
    expect(client.session()).toEqual(session);
  });

  it('when two flows are begun, as in two tabs, then each completes, in either order, with its own verifier', async () => {
    const client = createContentClient({ baseUrl: base });
    const first = person(false);
    const second = person(false);
    const firstStart = await client.beginSignIn('test', { redirect: back });
    const secondStart = await client.beginSignIn('test', { redirect: back });

    const secondLanding = await throughProvider(secondStart, second);
    const firstLanding = await throughProvider(firstStart, first);
    await expect(client.finishSignIn(secondLanding)).resolves.toMatchObject({
      email: second.email,
      emailVerified: false,
    });
    await expect(client.finishSignIn(firstLanding)).resolves.toMatchObject({ email: first.email });
    expect(client.session()?.email).toBe(first.email);
  });

  it('when the code reaches another browser, then it cannot use it (no_flow), and the browser that began the flow still can', async () => {
    const client = createContentClient({ baseUrl: base });
    const login = person(true);
    const landing = await throughProvider(await client.beginSignIn('test', { redirect: back }), login);

    const planted = await createContentClient({ baseUrl: base })
      .finishSignIn(landing)
      .catch((e: unknown) => e);
    expect(planted).toMatchObject({ kind: 'sign-in', reason: 'no_flow' });
    await expect(client.finishSignIn(landing)).resolves.toMatchObject({ email: login.email });
  });
});

describe('an account a provider made, which has no password', () => {
  it('when it asks to change its address within 5 minutes of signing in, then any string stands for the password, and the session goes on', async () => {
    const client = createContentClient({ baseUrl: base });
    const login = person(true);
    const session = await client.finishSignIn(
      await throughProvider(await client.beginSignIn('test', { redirect: back }), login),
    );
    await expect(
      client.account.requestEmailChange(`moved-${login.name}@example.com`, 'no password at all'),
    ).resolves.toBeUndefined();
    expect(client.session()).toEqual(session);
  });
});

describe('beginSignIn', () => {
  it('gives the provider’s start address, with a S256 challenge and a redirect that carries the flow’s key; two flows have their own', async () => {
    const client = createContentClient({ baseUrl: base });
    const first = parts(await client.beginSignIn('acme', { redirect: back }));
    const second = parts(await client.beginSignIn('acme', { redirect: back }));

    expect(`${first.url.origin}${first.url.pathname}`).toBe(`${base}/api/auth/oidc/acme/start`);
    expect(first.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.redirect.href).toBe(`${back}&flow=${first.flow}`);
    expect(first.flow).toMatch(/^[\w-]{20,}$/);
    expect(second.flow).not.toBe(first.flow);
    expect(second.challenge).not.toBe(first.challenge);
  });
});

describe('finishSignIn', () => {
  it('when the person comes back with #error=, then a SignInError with that reason, and nothing is sent', async () => {
    const { client, sent } = counted();
    const { redirect } = parts(await client.beginSignIn('acme', { redirect: back }));
    sent.length = 0;

    const error = await client.finishSignIn(`${redirect.href}#error=email_in_use`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SignInError);
    expect(error).toMatchObject({ kind: 'sign-in', name: 'SignInError', reason: 'email_in_use' });
    expect(sent).toEqual([]);
    expect(client.session()).toBeUndefined();
  });

  it('when the flow was begun in another browser, then a SignInError no_flow, and the code is not sent', async () => {
    const { redirect } = parts(await createContentClient({ baseUrl: base }).beginSignIn('acme', { redirect: back }));
    const { client: elsewhere, sent } = counted();

    const error = await elsewhere.finishSignIn(`${redirect.href}#code=a-planted-code`).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'sign-in', reason: 'no_flow', message: expect.stringContaining('no_flow') });
    expect(sent).toEqual([]);
  });

  it('when the code is not one the API gave, then its ApiError 400; the verifier is spent either way, so the same page again is no_flow', async () => {
    const { client, sent } = counted();
    const { redirect } = parts(await client.beginSignIn('acme', { redirect: back }));

    const error = await client.finishSignIn(`${redirect.href}#code=not-a-code`).catch((e: unknown) => e);
    expect(sent).toEqual(['POST /api/auth/oidc/exchange']);
    expect(error as ApiError).toMatchObject({ kind: 'api', name: 'ApiError', status: 400 });
    const again = await client.finishSignIn(`${redirect.href}#code=not-a-code`).catch((e: unknown) => e);
    expect(again).toMatchObject({ kind: 'sign-in', reason: 'no_flow' });
    expect(client.session()).toBeUndefined();
  });
});
