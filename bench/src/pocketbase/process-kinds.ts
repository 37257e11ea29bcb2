/** The processes of a side's tree by kind, for its memory and its CPU time. */
import { readFileSync, readlinkSync } from 'node:fs';
import { basename } from 'node:path';
import type { ProcessGroups } from '../cpu';
import { memoryOf, processName, processTree } from '../rss';
import type { MemoryOfSide } from './report-types';

/** What the launcher runs: a Node process running it is the launcher. */
const LAUNCHER = 'dev/devstack/dist/src/start.js';

/**
 * What a process is, by its command name (postgres, ferretdb, redis-server…); a Node process (whose
 * main thread names itself MainThread) by what it runs: npm, the launcher, or else `node`.
 */
function kindOf(pid: number): string {
  try {
    if (basename(readlinkSync(`/proc/${pid}/exe`)) === 'node') {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      // npm names itself by its command ("npm start", one string in place of its arguments).
      if (/^npm( |$)/.test(args[0] ?? '') || args.some((a) => a.endsWith('npm-cli.js'))) return 'npm';
      if (args.some((a) => a.endsWith(LAUNCHER))) return 'launcher';
      return 'node';
    }
  } catch {
    // gone, or not ours to read: its command name says enough
  }
  return processName(pid) || 'gone';
}

/** A process and all its descendants, grouped by kind (as memoryOfTree), for CPU time. */
export function processGroups(root: number): ProcessGroups {
  const groups: ProcessGroups = {};
  const pids = processTree(root);
  for (const pid of pids) {
    const kind = kindOf(pid);
    const group = groups[kind] ?? { pids: [] };
    group.pids.push(pid);
    groups[kind] = group;
  }
  return groups;
}

/** RSS and PSS of a process and all its descendants, and by kind. */
export function memoryOfTree(root: number): MemoryOfSide {
  const pids = processTree(root);
  const groups = new Map<string, number[]>();
  for (const pid of pids) {
    const name = kindOf(pid);
    groups.set(name, [...(groups.get(name) ?? []), pid]);
  }
  const byName = Object.fromEntries(
    [...groups]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, ps]) => [name, { ...memoryOf(ps), processes: ps.length }]),
  );
  return { ...memoryOf(pids), processes: pids.length, byName };
}
