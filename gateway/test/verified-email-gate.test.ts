/**
 * The gateway's REQUIRE_VERIFIED_EMAIL gate (verified-email.ts) against stand-in upstreams that
 * record what reaches them: what it asks identity, when, and what it answers when identity does
 * not answer. The whole system's behaviour is in verified-email.test.ts.
 */
import { verifyToken } from '@cs/auth';
import { newUserId, TEST_JWT_SECRET, tokenFor } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { echoUpstream, everyUpstreamAt, type GatewayProcess, spawnGateway } from './helpers';

const VERIFY_FIRST = {
  error:
    'Verify your e-mail address first: open the link we sent you, or ask for a new one (POST /api/auth/email-verification)',
};

type Upstream = Awaited<ReturnType<typeof echoUpstream>>;
let upstream: Upstream;
let silent: Upstream;
const gateways: GatewayProcess[] = [];

beforeAll(async () => {
  upstream = await echoUpstream();
  // Answers the revocation log, and nothing else: an identity that cannot say.
  silent = await echoUpstream({ answer: false });
});
afterAll(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await Promise.all([upstream?.close(), silent?.close()]);
});

async function gatewayWith(env: Record<string, string>): Promise<GatewayProcess> {
  const gateway = await spawnGateway(env);
  gateways.push(gateway);
  return gateway;
}

const questions = (to: Upstream) => to.seen.filter((s) => s.url === '/internal/email-verified');

function write(gateway: GatewayProcess, userId: string, method = 'POST', path = '/api/posts') {
  return fetch(`${gateway.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${tokenFor(userId)}`, 'content-type': 'application/json' },
    body: '{}',
  });
}

describe('REQUIRE_VERIFIED_EMAIL at the gateway', () => {
  it('when it is off (the default), then a write goes through and identity is asked nothing', async () => {
    const gateway = await gatewayWith(everyUpstreamAt(upstream.url));
    const before = questions(upstream).length;

    const res = await write(gateway, newUserId());

    expect(res.status).toBe(200);
    expect(questions(upstream).length).toBe(before);
  });

  it('when identity does not say verified, then writes are 403, each one asked again, and reads and /api/auth go through', async () => {
    const gateway = await gatewayWith({ ...everyUpstreamAt(upstream.url), REQUIRE_VERIFIED_EMAIL: 'true' });
    const userId = newUserId();
    const before = questions(upstream).length;

    const answers = [await write(gateway, userId), await write(gateway, userId, 'DELETE', `/api/notes/${newUserId()}`)];

    expect(await Promise.all(answers.map(async (r) => ({ status: r.status, body: await r.json() })))).toEqual([
      { status: 403, body: VERIFY_FIRST },
      { status: 403, body: VERIFY_FIRST },
    ]);
    const asked = questions(upstream).slice(before);
    expect(asked).toHaveLength(2);
    // Asked for the caller, with a token the gateway signed for it (as our services call one another).
    const authorization = String(asked[0]?.headers.authorization);
    expect(verifyToken(authorization.replace(/^Bearer /, ''), TEST_JWT_SECRET)).toBe(userId);
    const read = await fetch(`${gateway.url}/api/posts`);
    expect(read.status).toBe(200);
    expect((await write(gateway, userId, 'PATCH', '/api/auth/me')).status).toBe(200);
    expect(questions(upstream).length).toBe(before + 2);
  });

  it('when identity cannot answer, then the write is 503: the gate fails closed', async () => {
    const gateway = await gatewayWith({
      ...everyUpstreamAt(upstream.url),
      IDENTITY_URL: silent.url,
      REQUIRE_VERIFIED_EMAIL: 'true',
    });

    const res = await write(gateway, newUserId());

    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: 'Service temporarily unavailable' });
  }, 15_000);
});
