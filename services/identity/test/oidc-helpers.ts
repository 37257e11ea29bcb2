/**
 * Signing in with the test run's real OpenID Connect provider against identity in-process: our
 * `start`, the provider's login page (the test kit's signInAtProvider, its requests a browser's),
 * our callback, and `exchange`, each step a test can stop at.
 */
import { createHash, randomBytes } from 'node:crypto';
import { eventually, type ProviderLogin, signInAtProvider, TEST_OIDC_CLIENT, testOidcIssuer } from '@cs/testkit';
import { expect } from '@jest/globals';
import type { ProviderSettings } from '../src/oidc/provider-settings';
import { type IdentityHarness, startIdentity } from './helpers';

/** Where the sign-ins of these tests end: the web client's page (WEB_URL is allowed). */
export const LANDING = 'http://localhost:3000/signed-in';

export const testProvider = (id = 'test', issuer = testOidcIssuer()): ProviderSettings => ({
  id,
  name: 'Test',
  issuer,
  clientId: TEST_OIDC_CLIENT.id,
  clientSecret: TEST_OIDC_CLIENT.secret,
});

/** Identity with the test provider, once its discovery has answered. */
export async function startIdentityWithProvider(file: string, providers = [testProvider()]): Promise<IdentityHarness> {
  const h = await startIdentity(file, { oidcProviders: providers, FRONTEND_ORIGIN: ['http://localhost:5173'] });
  await eventually(
    'the providers discovered',
    async () => (await h.http.get('/api/auth/providers').expect(200)).body as unknown[],
    (list) => list.length === providers.length,
  );
  return h;
}

/** A client's PKCE pair: the verifier it keeps, and the challenge `start` is given. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

let people = 0;
/** A name no other test uses: the provider's subject. */
export function uniqueName(tag = 'person'): string {
  people += 1;
  return `${tag}-${process.pid}-${Date.now()}-${people}`;
}

/** `start`: the provider's authorization URL it redirects to. */
export async function startFlow(
  h: IdentityHarness,
  { challenge, redirect = LANDING, provider = 'test' }: { challenge: string; redirect?: string; provider?: string },
): Promise<URL> {
  const res = await h.http.get(`/api/auth/oidc/${provider}/start`).query({ redirect, challenge }).expect(302);
  return new URL(res.headers.location as string);
}

/** Our callback, as the browser the provider sent back would request it: where it sends the browser on. */
export async function callback(h: IdentityHarness, providerRedirect: URL): Promise<URL> {
  const res = await h.http.get(`${providerRedirect.pathname}${providerRedirect.search}`).expect(303);
  return new URL(res.headers.location as string);
}

/** The `#code=` or `#error=` of where the callback sent the browser, on our landing page. */
export function fragmentOf(landing: URL): { code?: string; error?: string } {
  expect(`${landing.origin}${landing.pathname}`).toBe(LANDING);
  return Object.fromEntries(new URLSearchParams(landing.hash.slice(1))) as { code?: string; error?: string };
}

/** A whole sign-in up to the landing page: start, the provider's login, our callback. */
export async function signInUpToLanding(h: IdentityHarness, login: ProviderLogin, challenge = pkce().challenge) {
  const authorization = await startFlow(h, { challenge });
  return fragmentOf(await callback(h, await signInAtProvider(authorization.href, login)));
}

/** A whole sign-in, exchanged: the session's answer. */
export async function signIn(h: IdentityHarness, login: ProviderLogin) {
  const { verifier, challenge } = pkce();
  const { code, error } = await signInUpToLanding(h, login, challenge);
  if (!code) throw new Error(`the sign-in ended with #error=${error}`);
  const res = await h.http.post('/api/auth/oidc/exchange').send({ code, verifier }).expect(200);
  return res.body as { token: string; refreshToken: string; expiresIn: number; emailVerified: boolean };
}

/** The user id of an access token. */
export function userIdOf(token: string): string {
  return (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { id: string }).id;
}
