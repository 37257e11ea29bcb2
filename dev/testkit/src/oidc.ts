/**
 * Signing in at the test run's OpenID Connect provider (TEST_OIDC_ISSUER) without a browser: the
 * requests a browser makes, its cookies kept by hand, each redirect read rather than followed, so
 * that a test can stop where the provider sends the browser back to us.
 */

import { TEST_OIDC_CLIENT } from './constants';

export interface ProviderLogin {
  /** The subject: the same name is the same person at the provider. */
  name: string;
  /** Test mode: the e-mail the provider gives (none when absent or empty). */
  email?: string;
  /** Test mode: whether the provider vouches for that e-mail (`email_verified`). */
  verified?: boolean;
}

/** The test run's provider, as the global setup started it. */
export function testOidcIssuer(): string {
  const issuer = process.env.TEST_OIDC_ISSUER;
  if (!issuer) throw new Error('TEST_OIDC_ISSUER is not set: the test kit starts the provider in its global setup');
  return issuer;
}

/**
 * A system's settings for signing in with the test run's provider, as provider `test` whose button
 * says "Test", and no auth rate limit (a suite signs in many times from one address).
 */
export function testOidcSettings(): Record<string, string> {
  return {
    AUTH_RATE_LIMIT: '0',
    OIDC_PROVIDERS: 'test',
    OIDC_TEST_ISSUER: testOidcIssuer(),
    OIDC_TEST_CLIENT_ID: TEST_OIDC_CLIENT.id,
    OIDC_TEST_CLIENT_SECRET: TEST_OIDC_CLIENT.secret,
    OIDC_TEST_NAME: 'Test',
  };
}

/**
 * Follows `authorizationUrl` (the provider's, with our client's parameters) through the login page
 * and returns where the provider sends the browser back: the client's redirect URI with `code`
 * and `state`, or with `error`.
 */
export async function signInAtProvider(authorizationUrl: string, login: ProviderLogin): Promise<URL> {
  const cookies = new Map<string, string>();
  const step = async (url: string, init: RequestInit = {}) => {
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: {
        ...(init.headers as Record<string, string>),
        cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    const location = res.headers.get('location');
    if (!location) throw new Error(`${url}: ${res.status} without a redirect: ${await res.text()}`);
    return new URL(location, url);
  };
  const interaction = await step(authorizationUrl);
  if (!interaction.pathname.startsWith('/interaction/')) return interaction;
  const form = new URLSearchParams({ name: login.name, email: login.email ?? '' });
  if (login.verified) form.set('email_verified', 'on');
  const resume = await step(`${interaction.href}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
  });
  // The consent page, which the provider answers at once, and back to the authorization.
  let next = await step(resume.href);
  for (let hops = 0; next.pathname.startsWith('/interaction/') || next.pathname.startsWith('/auth/'); hops++) {
    if (hops > 4) throw new Error(`the provider keeps the browser at ${next.href}`);
    next = await step(next.href);
  }
  return next;
}
