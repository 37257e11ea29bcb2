import { ConfigError } from '@cs/config';
import { describe, expect, it } from '@jest/globals';
import { readConfig } from '../src/config';

const MONGO_URL = 'mongodb://127.0.0.1:27017/identity';

describe('identity configuration', () => {
  it('when JWT_SECRET is missing, then loading fails naming the key', () => {
    expect(() => readConfig({ MONGO_URL })).toThrow(ConfigError);
    expect(() => readConfig({ MONGO_URL })).toThrow(/JWT_SECRET is required/);
  });

  it('when JWT_SECRET is shorter than 32 characters, then loading fails naming the key', () => {
    expect(() => readConfig({ MONGO_URL, JWT_SECRET: 'x'.repeat(31) })).toThrow(
      /JWT_SECRET must be at least 32 characters/,
    );
  });

  it('when only the required keys are given, then the contract defaults apply and the result is frozen', () => {
    const config = readConfig({ MONGO_URL, JWT_SECRET: 'x'.repeat(32) });

    expect(config).toMatchObject({ PORT: 4001, JWT_EXPIRES_IN: '1h', BCRYPT_COST: 12 });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('when several keys are wrong, then one error names all of them', () => {
    expect(() => readConfig({ PORT: 'eighty', JWT_EXPIRES_IN: 'soon', BCRYPT_COST: '99' })).toThrow(
      /JWT_SECRET is required; JWT_EXPIRES_IN must be a duration.*; PORT must be an integer.*; MONGO_URL is required; BCRYPT_COST must be an integer from 4 to 15/,
    );
  });
});
