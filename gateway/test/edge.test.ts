import { newUserId, TEST_FRONTEND_ORIGIN, tokenFor } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { echoUpstream, type GatewayProcess, spawnGateway } from './helpers';

type Upstream = Awaited<ReturnType<typeof echoUpstream>>;
let upstream: Upstream;
let silent: Upstream;
let gateway: GatewayProcess;
const token = tokenFor(newUserId());

beforeAll(async () => {
  upstream = await echoUpstream();
  silent = await echoUpstream({ answer: false });
  gateway = await spawnGateway({
    IDENTITY_URL: upstream.url,
    POSTS_URL: upstream.url,
    NOTES_URL: upstream.url,
    FILES_URL: silent.url,
    UPSTREAM_TIMEOUT: '500ms',
    AUTH_RATE_LIMIT: '3',
  });
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  await silent?.close();
});

describe('the gateway at its edges', () => {
  it('when a client sends internal headers, then they are dropped; Authorization and the request id are forwarded as they are', async () => {
    const res = await fetch(`${gateway.url}/api/posts/my-posts`, {
      headers: {
        Authorization: `Bearer ${token}`,
        'x-user-id': 'someone-else',
        'x-internal-role': 'admin',
        'x-authenticated-user': 'root',
        'x-request-id': 'trace-1',
      },
    });
    const seen = (await res.json()) as { headers: Record<string, string> };

    expect(res.status).toBe(200);
    expect(seen.headers.authorization).toBe(`Bearer ${token}`);
    expect(seen.headers['x-request-id']).toBe('trace-1');
    expect(seen.headers).not.toHaveProperty('x-user-id');
    expect(seen.headers).not.toHaveProperty('x-internal-role');
    expect(seen.headers).not.toHaveProperty('x-authenticated-user');
  });

  it('when a body is sent, then it reaches the service byte for byte, unparsed', async () => {
    const raw = '{"title":"é ü","body":"  spaced  ","extra":[1,2,{"$gt":""}]}';
    const res = await fetch(`${gateway.url}/api/posts`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: raw,
    });

    expect(((await res.json()) as { body: string }).body).toBe(raw);
  });

  it('when a protected route has no valid token, then 401 from the gateway and nothing reaches the service', async () => {
    const before = upstream.seen.length;
    const missing = await fetch(`${gateway.url}/api/notes`);
    const bad = await fetch(`${gateway.url}/api/notes`, { headers: { Authorization: 'Bearer forged.token.here' } });

    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ error: 'No token provided' });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toEqual({ error: 'Invalid or expired token' });
    expect(upstream.seen.length).toBe(before);
  });

  it('when the declared body is over 100 kB, then 413 JSON before anything is forwarded', async () => {
    const before = upstream.seen.length;
    const res = await fetch(`${gateway.url}/api/posts`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ body: 'x'.repeat(120 * 1024) }),
    });

    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: 'Request body too large' });
    expect(upstream.seen.length).toBe(before);
  });

  it('when the upstream does not answer in time, then 504 JSON, and the gateway does not hang', async () => {
    const started = Date.now();
    const res = await fetch(`${gateway.url}/upload-url`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{}',
    });

    expect(res.status).toBe(504);
    expect(await res.json()).toEqual({ error: 'Upstream service timed out' });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('when a client exceeds the auth rate limit, then 429 JSON with Retry-After', async () => {
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 4; i++) {
      last = await fetch(`${gateway.url}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      statuses.push(last.status);
    }

    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(await last?.json()).toEqual({ error: 'Too many requests, please try again later' });
    expect(Number(last?.headers.get('retry-after'))).toBeGreaterThan(0);
    // Other routes have their own, larger budget.
    expect((await fetch(`${gateway.url}/api/posts`)).status).toBe(200);
  });

  it('when a browser at FRONTEND_ORIGIN preflights, then CORS allows it; another origin gets no allowance', async () => {
    const preflight = (origin: string) =>
      fetch(`${gateway.url}/api/posts`, {
        method: 'OPTIONS',
        headers: {
          Origin: origin,
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'authorization,content-type',
        },
      });

    const allowed = await preflight(TEST_FRONTEND_ORIGIN);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(TEST_FRONTEND_ORIGIN);
    expect(allowed.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');

    const other = await preflight('http://evil.example');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('when a page at FRONTEND_ORIGIN resumes an event stream with Last-Event-ID, then the preflight allows that header', async () => {
    const res = await fetch(`${gateway.url}/api/realtime?topics=posts`, {
      method: 'OPTIONS',
      headers: {
        Origin: TEST_FRONTEND_ORIGIN,
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'authorization,last-event-id',
      },
    });

    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase().split(',')).toContain('last-event-id');
  });
});
