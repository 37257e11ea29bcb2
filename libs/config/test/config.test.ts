import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { ConfigError, env, loadConfig, parseDuration } from '../src';

describe('parseDuration', () => {
  it.each([
    ['15m', 900_000],
    ['1h', 3_600_000],
    ['7d', 604_800_000],
    ['250ms', 250],
    ['3600', 3_600_000],
  ])('when given %j, then %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', 'soon', '1w', '-5m', '0', '1.5h'])('when given %j, then it refuses', (text) => {
    expect(() => parseDuration(text)).toThrow();
  });

  it('when zero is allowed, then 0 and 0ms are 0, and a negative or a word is still refused', () => {
    expect(parseDuration('0', { allowZero: true })).toBe(0);
    expect(parseDuration('0ms', { allowZero: true })).toBe(0);
    expect(() => parseDuration('-5m', { allowZero: true })).toThrow();
    expect(() => parseDuration('never', { allowZero: true })).toThrow();
  });
});

describe('loadConfig', () => {
  const spec = {
    SECRET: env.secret(32),
    PORT: env.port(3000),
    ORIGINS: env.list(['http://a']),
    ENABLED: env.bool(false),
    MODE: env.oneOf(['a', 'b'] as const, 'a'),
    URL: env.url(),
  };

  it('when values are given, then they are typed and the result is frozen', () => {
    const config = loadConfig(spec, {
      SECRET: 's'.repeat(32),
      PORT: '8080',
      ORIGINS: 'http://x, http://y',
      ENABLED: 'yes',
      MODE: 'b',
      URL: 'http://host:1/',
    });

    expect(config).toEqual({
      SECRET: 's'.repeat(32),
      PORT: 8080,
      ORIGINS: ['http://x', 'http://y'],
      ENABLED: true,
      MODE: 'b',
      URL: 'http://host:1',
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('when keys are missing or wrong, then one ConfigError names every one of them', () => {
    let error: unknown;
    try {
      loadConfig(spec, { SECRET: 'short', PORT: '70000', ENABLED: 'maybe', MODE: 'c', URL: 'not a url' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      'SECRET must be at least 32 characters',
      'PORT must be an integer from 0 to 65535 (got "70000")',
      'ENABLED must be true or false (got "maybe")',
      'MODE must be one of a, b',
      'URL must be a URL (got "not a url")',
    ]);
  });

  it('when a key is blank, then its default applies, and a secret without one is required', () => {
    expect(() => loadConfig({ SECRET: env.secret(32) }, { SECRET: '   ' })).toThrow('SECRET is required');
    expect(loadConfig({ PORT: env.port(3000) }, { PORT: '' }).PORT).toBe(3000);
  });
});

describe('readEnvConfig', () => {
  // A developer's `.env` in the working directory must not reach a process started by a test or
  // by anything but the launcher: `npm start` reads it and hands its values on as environment.
  // A process of its own, as a service is (jest gives each test file a copy of process.env).
  it('when a .env file lies in the working directory, then a process does not read it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'config-dotenv-'));
    try {
      writeFileSync(join(dir, '.env'), 'CONFIG_TEST_PROBE=from-dotenv\n');
      const built = join(__dirname, '../dist/src/index.js');
      const read = `const c = require(${JSON.stringify(built)});
        const config = c.readEnvConfig({ CONFIG_TEST_PROBE: c.env.string('unset') });
        console.log(JSON.stringify([config.CONFIG_TEST_PROBE, process.env.CONFIG_TEST_PROBE ?? null]));`;
      const { CONFIG_TEST_PROBE: _, ...parentEnv } = process.env;
      const out = execFileSync(process.execPath, ['-e', read], { cwd: dir, env: parentEnv, encoding: 'utf8' });
      expect(JSON.parse(out)).toEqual(['unset', null]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
