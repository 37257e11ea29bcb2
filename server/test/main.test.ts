/**
 * The one process's entry: a configuration that is wrong stops it before anything starts, naming
 * the part and the key.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '@cs/devstack';
import { afterAll, describe, expect, it } from '@jest/globals';

const MAIN = join(REPO_ROOT, 'server/dist/src/main.js');
const SECRET = 'a-secret-of-at-least-thirty-two-characters';

function run(env: Record<string, string>) {
  const { status, stderr } = spawnSync(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH, ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status, stderr };
}

describe('server/: the one process’s configuration', () => {
  it('when one part’s configuration is wrong, then the process exits 1 naming that part and the key, before any part starts', () => {
    const { status, stderr } = run({ JWT_SECRET: SECRET });

    expect(status).toBe(1);
    expect(stderr).toBe('identity: Invalid configuration: MONGO_URL is required\n');
  });

  it('when a key is given for one part alone, then that part reads it, and the others keep the common one', () => {
    const { status, stderr } = run({
      JWT_SECRET: SECRET,
      MONGO_URL: 'mongodb://127.0.0.1:1',
      POSTS_PUBLIC_CHANGES_PER_MINUTE: 'many',
    });

    expect(status).toBe(1);
    expect(stderr).toBe(
      'posts: Invalid configuration: PUBLIC_CHANGES_PER_MINUTE must be an integer from 0 to 9007199254740991 (got "many")\n',
    );
  });

  describe('settings given as files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'server-setting-files-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const fileHolding = (name: string, content: string) => {
      const path = join(dir, name);
      writeFileSync(path, content);
      return path;
    };

    it('when MONGO_URL is given as a file, then every service gets its database on that server', () => {
      const { status, stderr } = run({
        JWT_SECRET: SECRET,
        MONGO_URL_FILE: fileHolding('mongo-url', 'mongodb://127.0.0.1:1\n'),
        POSTS_PUBLIC_CHANGES_PER_MINUTE: 'many',
      });

      // Identity, first, found its MONGO_URL: the first wrong part is posts, for its own key.
      expect(status).toBe(1);
      expect(stderr).toBe(
        'posts: Invalid configuration: PUBLIC_CHANGES_PER_MINUTE must be an integer from 0 to 9007199254740991 (got "many")\n',
      );
    });

    it('when one part’s key is given as a file beside the common key, then that part reads its file, without a clash', () => {
      const { status, stderr } = run({
        JWT_SECRET: SECRET,
        MONGO_URL: 'mongodb://127.0.0.1:1',
        POSTS_JWT_SECRET_FILE: fileHolding('posts-jwt-secret', 'too-short\n'),
      });

      expect(status).toBe(1);
      expect(stderr).toBe('posts: Invalid configuration: JWT_SECRET must be at least 32 characters\n');
    });

    it('when a variable of another program ends in _FILE and names no file, then it is never read', () => {
      const { status, stderr } = run({
        JWT_SECRET: SECRET,
        MONGO_URL: 'mongodb://127.0.0.1:1',
        TF_CLI_CONFIG_FILE: join(dir, 'not-ours'),
        POSTS_PUBLIC_CHANGES_PER_MINUTE: 'many',
      });

      expect(status).toBe(1);
      expect(stderr).toMatch(/^posts: Invalid configuration: PUBLIC_CHANGES_PER_MINUTE/);
    });
  });
});
