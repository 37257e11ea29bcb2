/**
 * A server started by the launcher is never left running without it: when the launcher is killed
 * with SIGKILL (no code of its own runs then), the kernel sends each child the signal it was
 * spawned with (process.ts `parentDeath`, setpriv's --pdeathsig). Here the launcher is a real Node
 * process that spawns its children with spawnChild from the build, as the launcher does.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '@cs/devstack';
import { eventually } from '@cs/testkit';
import { afterAll, expect, it } from '@jest/globals';

const dir = mkdtempSync(join(tmpdir(), 'parent-death-'));
/** Every child spawned, stopped at the end should one outlive its parent (a failing test). */
const children: number[] = [];
afterAll(() => {
  for (const pid of children.filter(running)) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Running, not a zombie waiting for init to reap it. */
function running(pid: number): boolean {
  const status = `/proc/${pid}/status`;
  if (!existsSync(status)) return false;
  return !/^State:\s+Z/m.test(readFileSync(status, 'utf8'));
}

/**
 * A parent that spawns one child (a Node process that writes the signal it gets to `heard`, then
 * exits), prints the child's pid, and waits.
 */
async function parentWithChild(signal: NodeJS.Signals, heard: string): Promise<{ parent: number; child: number }> {
  const child = `const fs = require('node:fs');
    for (const s of ['SIGTERM', 'SIGINT']) process.on(s, () => { fs.writeFileSync(${JSON.stringify(heard)}, s); process.exit(0); });
    fs.writeFileSync(${JSON.stringify(`${heard}.listening`)}, '');
    setInterval(() => {}, 1000);`;
  const parent = `
    const { spawnChild } = require(${JSON.stringify(join(REPO_ROOT, 'dev/devstack/dist/src/process.js'))});
    const c = spawnChild({ name: 'child', command: process.execPath, args: ['-e', ${JSON.stringify(child)}],
      logFile: ${JSON.stringify(join(dir, 'child.log'))}, parentDeathSignal: ${JSON.stringify(signal)} });
    console.log(c.pid);
    setInterval(() => {}, 1000);`;
  const proc = spawn(process.execPath, ['-e', parent], { stdio: ['ignore', 'pipe', 'inherit'] });
  const childPid = await new Promise<number>((resolve, reject) => {
    proc.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
    proc.once('exit', () => reject(new Error('the parent exited before it spawned its child')));
  });
  children.push(childPid);
  await eventually('the child listens for its signals', () => existsSync(`${heard}.listening`));
  return { parent: proc.pid as number, child: childPid };
}

it('when the launcher is killed with SIGKILL, then its child gets SIGTERM and is gone', async () => {
  const heard = join(dir, 'term');
  const { parent, child } = await parentWithChild('SIGTERM', heard);
  expect(running(child)).toBe(true);
  process.kill(parent, 'SIGKILL');
  await eventually('the child gone', () => !running(child));
  expect(readFileSync(heard, 'utf8')).toBe('SIGTERM');
});

it('when the launcher is killed with SIGKILL, then a child spawned with another signal (PostgreSQL: SIGINT) gets that one', async () => {
  const heard = join(dir, 'int');
  const { parent, child } = await parentWithChild('SIGINT', heard);
  process.kill(parent, 'SIGKILL');
  await eventually('the child gone', () => !running(child));
  expect(readFileSync(heard, 'utf8')).toBe('SIGINT');
});
