/** Stopping a system's whole process tree, and only the processes that are still its own. */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { processTree } from '../rss';

/** When a process started (/proc/<pid>/stat, field 22), to tell it from a later one with its pid. */
function startTime(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
  } catch {
    return '';
  }
}

/**
 * SIGTERM to the process (for ours npm, whose end is a SIGTERM to the launcher, which stops what it
 * started), then, once its whole tree as read before has exited or after `graceMs`, SIGKILL to
 * whatever of it is still that same process.
 */
export async function stopTree(child: ChildProcess, graceMs = 30_000): Promise<void> {
  const pid = child.pid;
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const tree = processTree(pid).map((p) => [p, startTime(p)] as const);
  let timer: NodeJS.Timeout | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    timer = setTimeout(resolve, graceMs);
  });
  const deadline = Date.now() + graceMs;
  child.kill('SIGTERM');
  await exited;
  clearTimeout(timer);
  while (Date.now() < deadline && tree.some(([p, started]) => started && startTime(p) === started)) await sleep(50);
  for (const [p, started] of tree) {
    if (!started || startTime(p) !== started) continue; // gone, as it should be
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}
