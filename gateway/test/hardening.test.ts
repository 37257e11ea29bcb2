/**
 * What a security review asked of the gateway itself: /readyz cannot be used to multiply load on
 * the services, answers that belong to one person are never stored by a cache, database timings
 * reach clients only when configured, and every answer carries the security headers.
 */
import { newUserId, TEST_FRONTEND_ORIGIN, tokenFor } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { echoUpstream, everyUpstreamAt, type GatewayProcess, spawnGateway } from './helpers';

type Upstream = Awaited<ReturnType<typeof echoUpstream>>;
let upstream: Upstream;
let gateway: GatewayProcess;
let timed: GatewayProcess;
const auth = { Authorization: `Bearer ${tokenFor(newUserId())}` };

beforeAll(async () => {
  upstream = await echoUpstream();
  [gateway, timed] = await Promise.all([
    spawnGateway({ ...everyUpstreamAt(upstream.url), RATE_LIMIT: '0', AUTH_RATE_LIMIT: '0' }),
    spawnGateway({ ...everyUpstreamAt(upstream.url), SERVER_TIMING: 'on' }),
  ]);
});
afterAll(async () => {
  await gateway?.stop();
  await timed?.stop();
  await upstream?.close();
});

describe('/readyz under a storm', () => {
  it('when 20 clients call /readyz as fast as they can for 2.5 s, then every service is checked at most once a second', async () => {
    const checks = () => upstream.seen.filter((s) => s.url === '/readyz').length;
    const before = checks();
    const started = Date.now();
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (Date.now() - started < 2500) statuses.push((await fetch(`${gateway.url}/readyz`)).status);
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    // The four services share one echo server here: one round of checks is four requests to it.
    const rounds = (checks() - before) / 4;

    expect(statuses.length).toBeGreaterThan(200);
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(rounds).toBeGreaterThanOrEqual(2);
    expect(rounds).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
  });
});

describe('caching of answers', () => {
  it('when a request carries a token, then its answer says no-store, whatever the service said', async () => {
    for (const path of ['/api/notes', '/api/posts/my-posts', '/api/posts', '/upload-url']) {
      const res = await fetch(`${gateway.url}${path}`, { headers: auth });
      expect({ path, cacheControl: res.headers.get('cache-control') }).toEqual({ path, cacheControl: 'no-store' });
    }
  });

  it('when identity answers (tokens live there), then no-store, with or without a token', async () => {
    for (const path of ['/api/auth/login', '/api/auth/register']) {
      const res = await fetch(`${gateway.url}${path}`, { method: 'POST' });
      expect({ path, cacheControl: res.headers.get('cache-control') }).toEqual({ path, cacheControl: 'no-store' });
    }
  });

  it('when a public read is anonymous, then the service’s own caching passes through', async () => {
    const res = await fetch(`${gateway.url}/api/posts?tag=x`);
    expect(res.headers.get('cache-control')).toBe('private, no-cache');
  });
});

describe('Server-Timing', () => {
  it('when SERVER_TIMING is unset, then the services’ timings never reach the client', async () => {
    const res = await fetch(`${gateway.url}/api/posts`, { headers: { Origin: TEST_FRONTEND_ORIGIN } });
    expect(res.status).toBe(200);
    expect(res.headers.get('server-timing')).toBeNull();
    expect(res.headers.get('access-control-expose-headers')).not.toContain('Server-Timing');
    // A page on another origin can follow a list's next page.
    expect(res.headers.get('access-control-expose-headers')).toContain('Link');
  });

  it('when SERVER_TIMING is on, then they pass through, and CORS lets a page read them', async () => {
    const res = await fetch(`${timed.url}/api/posts`);
    expect(res.headers.get('server-timing')).toBe('db;dur=1.2, app;dur=2.5');
    const fromPage = await fetch(`${timed.url}/api/posts`, { headers: { Origin: TEST_FRONTEND_ORIGIN } });
    expect(fromPage.headers.get('access-control-expose-headers')).toContain('Server-Timing');
  });
});

describe('security headers', () => {
  it('when anything answers, an API read, a gateway error, a 404, then the security headers are on it', async () => {
    const answers = await Promise.all([
      fetch(`${gateway.url}/api/posts`),
      fetch(`${gateway.url}/api/notes`),
      fetch(`${gateway.url}/nothing`),
      fetch(`${gateway.url}/healthz`),
    ]);
    expect(answers.map((r) => r.status)).toEqual([200, 401, 404, 200]);
    for (const res of answers) {
      expect(res.headers.get('content-security-policy')).toBe(
        "default-src 'none';base-uri 'none';form-action 'none';frame-ancestors 'none'",
      );
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('cross-origin-resource-policy')).toBe('same-origin');
      expect(res.headers.get('strict-transport-security')).toBeNull();
      expect(res.headers.get('x-powered-by')).toBeNull();
    }
  });
});
