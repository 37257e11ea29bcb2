import { freePort } from '@cs/devstack';
import { TEST_OIDC_CLIENT, testOidcIssuer } from '@cs/testkit';
import { describe, expect, it } from '@jest/globals';
import { createProviderDirectory } from '../src/oidc/provider-directory';

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
