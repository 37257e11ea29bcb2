import { CLIENT_ADDRESS_HEADER } from '@cs/koa';
import { signInAtProvider, TEST_OIDC_OTHER_CLIENT } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type IdentityHarness, uniqueEmail } from './helpers';
import {
  callback,
  fragmentOf,
  LANDING,
  pkce,
  signInUpToLanding,
  startFlow,
  startIdentityWithProvider,
  uniqueName,
  userIdOf,
} from './oidc-helpers';

let h: IdentityHarness;

beforeAll(async () => {
  h = await startIdentityWithProvider(__filename);
});
afterAll(async () => {
  await h.db.drop();
});

const vouched = () => ({ name: uniqueName(), email: uniqueEmail('oidc-failure'), verified: true });
const exchange = (code: string | undefined, verifier: string) =>
  h.http.post('/api/auth/oidc/exchange').send({ code, verifier });

describe('starting a sign-in', () => {
  it('when the provider is unknown, then 404', async () => {
    const res = await h.http
      .get('/api/auth/oidc/nosuch/start')
      .query({ redirect: LANDING, challenge: pkce().challenge })
      .expect(404);

    expect(res.body).toEqual({ error: 'There is no sign-in provider by that name.' });
  });

  it('when the name cannot be a provider’s, then the same 404', async () => {
    const res = await h.http.get('/api/auth/oidc/Not-A-Name/start').query({ redirect: LANDING }).expect(404);

    expect(res.body).toEqual({ error: 'There is no sign-in provider by that name.' });
  });

  it('when the challenge is missing, then 400', async () => {
    const res = await h.http.get('/api/auth/oidc/test/start').query({ redirect: LANDING }).expect(400);

    expect(res.body).toEqual({ error: expect.stringMatching(/^challenge is required/) });
  });

  it('when the challenge is not a base64url SHA-256, then 400', async () => {
    const res = await h.http
      .get('/api/auth/oidc/test/start')
      .query({ redirect: LANDING, challenge: 'short' })
      .expect(400);

    expect(res.body).toEqual({ error: expect.stringMatching(/^challenge is required/) });
  });

  it.each([
    ['another origin', 'https://evil.example/steal'],
    ['a look-alike origin', 'http://localhost.evil.example:3000/'],
    ['a script', 'javascript:alert(1)'],
    ['a relative path', '/signed-in'],
  ])('when the redirect is %s, then 400 (no open redirect)', async (_what, redirect) => {
    const res = await h.http
      .get('/api/auth/oidc/test/start')
      .query({ redirect, challenge: pkce().challenge })
      .expect(400);

    expect(res.body).toEqual({
      error: 'redirect must be a page of the web client: its origin is not one this service sends people back to.',
    });
  });

  it('when the redirect is on FRONTEND_ORIGIN, then the sign-in starts, with a redirect no one caches or is referred from', async () => {
    const res = await h.http
      .get('/api/auth/oidc/test/start')
      .query({ redirect: 'http://localhost:5173/app', challenge: pkce().challenge })
      .expect(302);

    expect(res.headers).toMatchObject({ 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
    expect(res.text).toBe('');
  });

  it('when one address has 20 sign-ins open, then its next is 429 and another address still starts one', async () => {
    const from = (address: string) =>
      h.http
        .get('/api/auth/oidc/test/start')
        .set(CLIENT_ADDRESS_HEADER, address)
        .query({ redirect: LANDING, challenge: pkce().challenge });
    const crowded = `198.51.100.${process.pid % 250}`;
    for (let i = 0; i < 20; i++) await from(crowded).expect(302);

    const res = await from(crowded).expect(429);

    expect(res.body).toEqual({
      error: 'Too many sign-ins are under way from this address. Finish one, or wait a few minutes.',
    });
    expect(res.headers['retry-after']).toBe('600');
    await from('203.0.113.7').expect(302);
  });
});

describe('the callback', () => {
  it('when the state is unknown, then 400', async () => {
    const res = await h.http.get('/api/auth/oidc/test/callback').query({ state: 'nosuchstate', code: 'x' }).expect(400);

    expect(res.body).toEqual({
      error: 'This sign-in is unknown, has expired or was completed already. Start it again.',
    });
  });

  it('when the state is missing, then 400', async () => {
    const res = await h.http.get('/api/auth/oidc/test/callback').query({ code: 'x' }).expect(400);

    expect(res.body).toEqual({
      error: 'This sign-in is unknown, has expired or was completed already. Start it again.',
    });
  });

  it('when the sign-in has expired, then 400', async () => {
    const authorization = await startFlow(h, { challenge: pkce().challenge });
    const back = await signInAtProvider(authorization.href, vouched());
    const state = back.searchParams.get('state');
    await h.db.connection
      .collection('oidc_flows')
      .updateOne({ _id: state as never }, { $set: { expiresAt: new Date(0) } });

    const res = await h.http.get(`${back.pathname}${back.search}`).expect(400);

    expect(res.body).toEqual({
      error: 'This sign-in is unknown, has expired or was completed already. Start it again.',
    });
  });

  it('when the callback is replayed, then the replay is 400 and the first code still works', async () => {
    const { verifier, challenge } = pkce();
    const back = await signInAtProvider((await startFlow(h, { challenge })).href, vouched());
    const { code } = fragmentOf(await callback(h, back));

    const replay = await h.http.get(`${back.pathname}${back.search}`).expect(400);

    expect(replay.body).toEqual({
      error: 'This sign-in is unknown, has expired or was completed already. Start it again.',
    });
    await exchange(code, verifier).expect(200);
  });

  it('when the provider made the code for another client, then the browser goes back with #error=provider_error', async () => {
    const authorization = await startFlow(h, { challenge: pkce().challenge });
    // The same request, state and all, by another application registered at the same provider.
    authorization.searchParams.set('client_id', TEST_OIDC_OTHER_CLIENT.id);
    const back = await signInAtProvider(authorization.href, vouched());
    expect(back.searchParams.get('code')).toEqual(expect.any(String));

    expect(fragmentOf(await callback(h, back))).toEqual({ error: 'provider_error' });
    // Refused by the provider when we traded it: it was not made for our client.
    expect(h.logs.text()).toMatch(/invalid_grant/);
  });

  it('when the person refuses at the provider, then the browser goes back with #error=access_denied', async () => {
    const authorization = await startFlow(h, { challenge: pkce().challenge });
    const back = new URL(authorization.searchParams.get('redirect_uri') as string);
    back.searchParams.set('state', authorization.searchParams.get('state') as string);
    back.searchParams.set('error', 'access_denied');
    back.searchParams.set('iss', `${authorization.origin}`);

    expect(fragmentOf(await callback(h, back))).toEqual({ error: 'access_denied' });
  });
});

describe('exchanging the login code', () => {
  it('when a code is used twice, then the second is 400', async () => {
    const { verifier, challenge } = pkce();
    const { code } = await signInUpToLanding(h, vouched(), challenge);
    await exchange(code, verifier).expect(200);

    const res = await exchange(code, verifier).expect(400);

    expect(res.body).toEqual({
      error: 'This sign-in code is not valid: it was used already, has expired, or never existed.',
    });
  });

  it('when the verifier is not the one whose challenge started the flow, then 400, and the code is used up', async () => {
    const { verifier, challenge } = pkce();
    const { code } = await signInUpToLanding(h, vouched(), challenge);

    const res = await exchange(code, pkce().verifier).expect(400);

    expect(res.body).toEqual({
      error: 'This sign-in code was not started by this client: the verifier does not match its challenge.',
    });
    await exchange(code, verifier).expect(400);
  });

  it('when the code has expired, then 400', async () => {
    const { verifier, challenge } = pkce();
    const { code } = await signInUpToLanding(h, vouched(), challenge);
    const subject = String(code).split('.')[0];
    await h.db.connection
      .collection('one_time_tokens')
      .updateOne({ _id: `oidc-login:${subject}` as never }, { $set: { expiresAt: new Date(Date.now() - 1000) } });

    const res = await exchange(code, verifier).expect(400);

    expect(res.body).toEqual({
      error: 'This sign-in code is not valid: it was used already, has expired, or never existed.',
    });
  });

  it('when the code or the verifier is missing, then 400', async () => {
    const res = await h.http.post('/api/auth/oidc/exchange').send({ verifier: pkce().verifier }).expect(400);

    expect(res.body).toMatchObject({ error: 'code and verifier are required' });
  });

  it('when two flows run in two tabs, then each completes, into the same account', async () => {
    const person = vouched();
    const tabs = [pkce(), pkce()];
    const authorizations = await Promise.all(tabs.map(({ challenge }) => startFlow(h, { challenge })));
    const backs = [];
    for (const authorization of authorizations) backs.push(await signInAtProvider(authorization.href, person));
    const codes = await Promise.all(backs.map(async (back) => fragmentOf(await callback(h, back)).code));

    const sessions = await Promise.all(codes.map((code, i) => exchange(code, tabs[i]?.verifier as string).expect(200)));

    expect(userIdOf(sessions[0]?.body.token)).toBe(userIdOf(sessions[1]?.body.token));
  });
});
