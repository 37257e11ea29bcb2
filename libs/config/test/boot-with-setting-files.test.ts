/**
 * A real part's boot (the gateway's server.js, through configOrExit as every part's): it reads
 * JWT_SECRET_FILE, and refuses to start when JWT_SECRET is given both ways.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '@cs/devstack';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

const GATEWAY = join(REPO_ROOT, 'gateway/dist/src/server.js');
const SECRET = 'a-secret-of-at-least-thirty-two-characters';

let dir: string;
let secretFile: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'config-boot-'));
  secretFile = join(dir, 'jwt_secret');
  await writeFile(secretFile, `${SECRET}\n`);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The environment a part gets here: only what the test gives, on loopback and any free port. */
function partEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', ...env };
}

/** Whether the gateway started with `env` logs that it listens; it is stopped either way. */
function listens(env: NodeJS.ProcessEnv): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [GATEWAY], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('"msg":"listening"')) child.kill('SIGTERM');
    });
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(out.includes('"msg":"listening"'));
    });
  });
}

describe('a part’s boot with a setting given as a file', () => {
  it('when JWT_SECRET and JWT_SECRET_FILE are both set, then the part exits 1 naming both, before it starts', () => {
    const { status, stderr } = spawnSync(process.execPath, [GATEWAY], {
      env: partEnv({ JWT_SECRET: SECRET, JWT_SECRET_FILE: secretFile }),
      encoding: 'utf8',
      timeout: 20_000,
    });

    expect(status).toBe(1);
    expect(stderr).toBe('gateway: Invalid configuration: JWT_SECRET and JWT_SECRET_FILE are both set: give one\n');
  });

  it('when only JWT_SECRET_FILE is set, then the part reads its secret from the file and listens', async () => {
    await expect(listens(partEnv({ JWT_SECRET_FILE: secretFile }))).resolves.toBe(true);
  });
});
