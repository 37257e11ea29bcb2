import { freePort, type RunningServer, startOidcProvider } from '@cs/devstack';
import { eventually, signInAtProvider, TEST_OIDC_CLIENT, testOidcIssuer, testOidcRedirects } from '@cs/testkit';
import { describe, expect, it } from '@jest/globals';
import { createProviderDirectory } from '../src/oidc/provider-directory';
import { startIdentity, uniqueEmail } from './helpers';
import { callback, fragmentOf, LANDING, pkce, startFlow, testProvider, uniqueName } from './oidc-helpers';

const settings = (id: string, issuer: string) => ({
  id,
  name: id.toUpperCase(),
  issuer,
  clientId: TEST_OIDC_CLIENT.id,
  clientSecret: TEST_OIDC_CLIENT.secret,
});

describe('OpenID Connect discovery (openid-client against the real provider)', () => {
  it('when the provider answers, then it is usable, with the endpoints its document names', async () => {
    const directory = createProviderDirectory([settings('test', testOidcIssuer())]);

    await directory.discoverMissing();

    expect(directory.list()).toEqual([{ id: 'test', name: 'TEST' }]);
    const metadata = directory.usable('test')?.client.serverMetadata();
    expect(metadata?.issuer).toBe(testOidcIssuer());
    expect(metadata?.authorization_endpoint).toBe(`${testOidcIssuer()}/auth`);
    expect(metadata?.code_challenge_methods_supported).toEqual(['S256']);
  });

  it('when a provider cannot be reached, then discovery fails naming it, and only the others are listed', async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const directory = createProviderDirectory([settings('gone', nowhere), settings('test', testOidcIssuer())]);

    await expect(directory.discoverMissing()).rejects.toThrow(/OpenID Connect discovery failed \(gone: /);

    expect(directory.list()).toEqual([{ id: 'test', name: 'TEST' }]);
    expect(directory.isConfigured('gone')).toBe(true);
    expect(directory.usable('gone')).toBeUndefined();
  });
});

describe('a provider that cannot be reached when identity starts', () => {
  it('when it starts answering later, then it is left out until then, and then listed and usable', async () => {
    const port = await freePort();
    const issuer = `http://127.0.0.1:${port}`;
    const h = await startIdentity(__filename, { oidcProviders: [testProvider('late', issuer)] });
    let provider: RunningServer | undefined;
    try {
      expect((await h.http.get('/api/auth/providers').expect(200)).body).toEqual([]);
      const early = await h.http
        .get('/api/auth/oidc/late/start')
        .query({ redirect: LANDING, challenge: pkce().challenge })
        .expect(503);
      expect(early.body).toEqual({
        error: 'This sign-in provider cannot be reached right now. Try again in a moment.',
      });

      provider = await startOidcProvider({
        dataDir: process.env.TEST_DATA_DIR as string,
        mode: 'test',
        port,
        clients: [
          {
            client_id: TEST_OIDC_CLIENT.id,
            client_secret: TEST_OIDC_CLIENT.secret,
            redirect_uris: testOidcRedirects(['late']),
            application_type: 'native',
          },
        ],
      });

      await eventually(
        'the late provider listed',
        async () => (await h.http.get('/api/auth/providers').expect(200)).body,
        (list) => JSON.stringify(list) === JSON.stringify([{ id: 'late', name: 'Test' }]),
      );
      const person = { name: uniqueName(), email: uniqueEmail('oidc-late'), verified: true };
      const { code } = fragmentOf(
        await callback(
          h,
          await signInAtProvider((await startFlow(h, { challenge: pkce().challenge, provider: 'late' })).href, person),
        ),
      );
      expect(code).toEqual(expect.any(String));
    } finally {
      await provider?.stop();
      await h.db.drop();
    }
  });
});
