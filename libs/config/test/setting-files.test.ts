/**
 * A setting given as a file, `X_FILE=/path` (Docker Swarm's and Kubernetes' secrets): read with
 * its trailing newline removed when its setting is read, and every problem with one named at
 * once, never what it holds.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ConfigError, env, loadConfig, settingOf } from '../src';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'config-setting-files-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A file holding `content`, under a name of its own. */
async function fileHolding(name: string, content: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

/** What loadConfig finds wrong with `source`, for a spec of the keys A to D (and JWT_SECRET). */
function problemsOf(source: Record<string, string | undefined>): string[] {
  const spec = Object.fromEntries(['A', 'B', 'C', 'D', 'JWT_SECRET'].map((key) => [key, env.string('unset')]));
  try {
    loadConfig(spec, source);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('no ConfigError was thrown');
}

describe('settingOf', () => {
  it('when X_FILE names a file ending in a newline, then X is its content without it', async () => {
    const path = await fileHolding('lf', 'the-secret\n');

    expect(settingOf({ JWT_SECRET_FILE: path, PORT: '8080' }, 'JWT_SECRET')).toBe('the-secret');
  });

  it('when the file ends in CRLF, then that one line end is removed', async () => {
    const path = await fileHolding('crlf', 'the-secret\r\n');

    expect(settingOf({ JWT_SECRET_FILE: path }, 'JWT_SECRET')).toBe('the-secret');
  });

  it('when the value has leading, inner and trailing blanks or a second newline, then only one newline is removed', async () => {
    const path = await fileHolding('blanks', '  two words \n\n');

    expect(settingOf({ SMTP_URL_FILE: path }, 'SMTP_URL')).toBe('  two words \n');
  });

  it('when X_FILE is empty or blank, then it is not given: X is as given', () => {
    expect(settingOf({ JWT_SECRET: 'from-env', JWT_SECRET_FILE: '' }, 'JWT_SECRET')).toBe('from-env');
    expect(settingOf({ PORT_FILE: '  ' }, 'PORT')).toBeUndefined();
  });

  it('when only X is given, then X is as given, blanks and all', () => {
    expect(settingOf({ JWT_SECRET: ' as given ' }, 'JWT_SECRET')).toBe(' as given ');
  });
});

describe('loadConfig with settings given as files', () => {
  it('when a key of the spec is given as a file, then the config holds the file’s content', async () => {
    const path = await fileHolding('spec', 'from-a-file\n');

    expect(loadConfig({ JWT_SECRET: env.secret(5) }, { JWT_SECRET_FILE: path })).toEqual({ JWT_SECRET: 'from-a-file' });
  });

  it('when a variable that is no key of the spec ends in _FILE and names no file, then it is never read', () => {
    // Another program's, as TF_CLI_CONFIG_FILE or AWS_CONFIG_FILE are on developers' machines.
    const nowhere = join(dir, 'not-ours');

    expect(loadConfig({ PORT: env.port(3000) }, { TF_CLI_CONFIG_FILE: nowhere, PORT: '8080' })).toEqual({ PORT: 8080 });
  });

  it('when X and X_FILE are both set, then the problem names both keys', async () => {
    const path = await fileHolding('both', 'from-file\n');

    expect(problemsOf({ JWT_SECRET: 'from-env', JWT_SECRET_FILE: path })).toEqual([
      'JWT_SECRET and JWT_SECRET_FILE are both set: give one',
    ]);
  });

  it('when the file is missing, then the problem names the key, the path and ENOENT, and nothing else', () => {
    const path = join(dir, 'missing');

    expect(problemsOf({ JWT_SECRET_FILE: path })).toEqual([
      `JWT_SECRET_FILE names a file that cannot be read (${path}): ENOENT`,
    ]);
  });

  it('when a file cannot be read, then its content never reaches the message', async () => {
    // A directory cannot be read as a file (EISDIR); beside it, a readable file with a conflict.
    const secret = 'do-not-leak-this-value';
    const path = await fileHolding('leak', `${secret}\n`);

    const error = (() => {
      try {
        loadConfig({ A: env.string(), B: env.string() }, { A_FILE: dir, B: 'given', B_FILE: path });
      } catch (err) {
        return err as ConfigError;
      }
      throw new Error('no ConfigError was thrown');
    })();

    expect(error.problems).toEqual([
      `A_FILE names a file that cannot be read (${dir}): EISDIR`,
      'B and B_FILE are both set: give one',
    ]);
    expect(error.message).not.toContain(secret);
  });

  it('when the file is empty, or holds only its newline, then that is a problem', async () => {
    const empty = await fileHolding('empty', '');
    const newline = await fileHolding('newline', '\n');

    expect(problemsOf({ A_FILE: empty, B_FILE: newline })).toEqual([
      `A_FILE names an empty file (${empty})`,
      `B_FILE names an empty file (${newline})`,
    ]);
  });

  it('when several files have problems, then one ConfigError names every one of them', async () => {
    const given = await fileHolding('given', 'value\n');
    const empty = await fileHolding('empty-too', '');
    const missing = join(dir, 'nowhere');

    expect(problemsOf({ A: 'x', A_FILE: given, B_FILE: missing, C_FILE: empty, D_FILE: given })).toEqual([
      'A and A_FILE are both set: give one',
      `B_FILE names a file that cannot be read (${missing}): ENOENT`,
      `C_FILE names an empty file (${empty})`,
    ]);
  });
});
