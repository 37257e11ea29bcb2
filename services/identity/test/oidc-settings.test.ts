import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@cs/config';
import { afterAll, describe, expect, it } from '@jest/globals';
import { readConfig } from '../src/config';

const REQUIRED = { MONGO_URL: 'mongodb://127.0.0.1:27017/identity', JWT_SECRET: 'x'.repeat(32) };
const acme = {
  OIDC_ACME_ISSUER: 'https://id.acme.example',
  OIDC_ACME_CLIENT_ID: 'content-service',
  OIDC_ACME_CLIENT_SECRET: 'acme-secret',
};

describe('the OpenID Connect provider settings', () => {
  it('when none are given, then there are no providers and PUBLIC_URL is http://localhost:3000', () => {
    const config = readConfig(REQUIRED);

    expect(config.oidcProviders).toEqual([]);
    expect(config.PUBLIC_URL).toBe('http://localhost:3000');
  });

  it('when a provider is named with its keys, then it is read, its name defaulting to its id', () => {
    const config = readConfig({ ...REQUIRED, OIDC_PROVIDERS: 'acme', ...acme, PUBLIC_URL: 'https://api.example' });

    expect(config.oidcProviders).toEqual([
      {
        id: 'acme',
        name: 'acme',
        issuer: 'https://id.acme.example',
        clientId: 'content-service',
        clientSecret: 'acme-secret',
      },
    ]);
  });

  describe('a client secret given as a file (a Swarm secret)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'oidc-settings-'));
    const { OIDC_ACME_CLIENT_SECRET: _, ...acmeWithoutSecret } = acme;
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('when OIDC_<NAME>_CLIENT_SECRET_FILE names a file, then the secret is its content', () => {
      const file = join(dir, 'acme');
      writeFileSync(file, 'acme-secret-from-a-file\n');

      const config = readConfig({
        ...REQUIRED,
        OIDC_PROVIDERS: 'acme',
        ...acmeWithoutSecret,
        OIDC_ACME_CLIENT_SECRET_FILE: file,
      });

      expect(config.oidcProviders[0]?.clientSecret).toBe('acme-secret-from-a-file');
    });

    it('when the file cannot be read, then the boot is refused naming the key once, not as missing too', () => {
      const nowhere = join(dir, 'nowhere');

      expect(() =>
        readConfig({
          ...REQUIRED,
          OIDC_PROVIDERS: 'acme',
          ...acmeWithoutSecret,
          OIDC_ACME_CLIENT_SECRET_FILE: nowhere,
        }),
      ).toThrow(
        new ConfigError([`OIDC_ACME_CLIENT_SECRET_FILE names a file that cannot be read (${nowhere}): ENOENT`]),
      );
    });
  });

  it('when OIDC_<NAME>_NAME is given, then it is the button’s name', () => {
    const config = readConfig({ ...REQUIRED, OIDC_PROVIDERS: 'acme', ...acme, OIDC_ACME_NAME: 'Acme Corp' });

    expect(config.oidcProviders[0]?.name).toBe('Acme Corp');
  });

  it('when a name is not 1 to 20 of [a-z0-9], then the boot is refused naming it', () => {
    expect(() => readConfig({ ...REQUIRED, OIDC_PROVIDERS: 'Acme-Corp' })).toThrow(ConfigError);
    expect(() => readConfig({ ...REQUIRED, OIDC_PROVIDERS: 'a'.repeat(21) })).toThrow(
      /OIDC_PROVIDERS must name each provider with 1 to 20 lowercase letters or digits/,
    );
  });

  it('when a provider’s keys are missing, then the boot is refused naming each of them', () => {
    expect(() => readConfig({ ...REQUIRED, OIDC_PROVIDERS: 'acme,corp', ...acme })).toThrow(
      /OIDC_CORP_ISSUER is required; OIDC_CORP_CLIENT_ID is required; OIDC_CORP_CLIENT_SECRET is required/,
    );
  });

  it('when an issuer is plain http off this machine, then the boot is refused', () => {
    expect(() =>
      readConfig({ ...REQUIRED, OIDC_PROVIDERS: 'acme', ...acme, OIDC_ACME_ISSUER: 'http://id.acme.example' }),
    ).toThrow(/OIDC_ACME_ISSUER must be https \(or http on loopback\)/);
  });

  it('when the issuer is on loopback (the dev provider) and PUBLIC_URL is not, then the boot is refused', () => {
    const dev = { ...acme, OIDC_ACME_ISSUER: 'http://127.0.0.1:4010' };

    expect(() =>
      readConfig({ ...REQUIRED, OIDC_PROVIDERS: 'acme', ...dev, PUBLIC_URL: 'https://api.example' }),
    ).toThrow(
      /OIDC_ACME_ISSUER is on loopback, a provider on this machine, which is refused when PUBLIC_URL is not on loopback/,
    );
    expect(
      readConfig({ ...REQUIRED, OIDC_PROVIDERS: 'acme', ...dev, PUBLIC_URL: 'http://localhost:3000' }).oidcProviders,
    ).toHaveLength(1);
  });
});
