/**
 * CPU time per process, from /proc: what each process of a system spent over a measured window,
 * so that a throughput can be split into CPU-milliseconds per request for each kind of process.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { processTree } from './rss';

/** Clock ticks a second, the unit of /proc's CPU times (100 on every Linux we run on). */
const TICKS_PER_S = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * A process's CPU time in ms: its own (utime + stime) and that of its children it has waited for
 * (cutime + cstime: PostgreSQL's backends that ended). 0 when it is gone.
 */
export function cpuMsOfPid(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (in parentheses, may hold spaces): state is the first;
    // utime, stime, cutime, cstime are stat's 14th to 17th fields, 12th to 15th here.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = [11, 12, 13, 14].reduce((n, i) => n + Number(fields[i] ?? 0), 0);
    return (ticks * 1000) / TICKS_PER_S;
  } catch {
    return 0;
  }
}

/** Named groups of processes; `tree` groups count every descendant too (PostgreSQL's backends). */
export type ProcessGroups = Record<string, { pids: number[]; tree?: boolean }>;

export interface CpuSnapshot {
  at: bigint;
  /** Per group, per pid: CPU ms so far. */
  groups: Record<string, Map<number, number>>;
  /** The whole machine, from /proc/stat: ms of CPU busy, summed over every core. */
  machine: { busyMs: number };
}

function machineTimes(): { busyMs: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  // cpu user nice system idle iowait irq softirq steal guest guest_nice (guest is inside user)
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return { busyMs: ((user + nice + system + irq + softirq + steal) * 1000) / TICKS_PER_S };
}

export function cpuSnapshot(groups: ProcessGroups): CpuSnapshot {
  const taken: CpuSnapshot['groups'] = {};
  for (const [name, { pids, tree }] of Object.entries(groups)) {
    const all = tree ? pids.flatMap((pid) => processTree(pid)) : pids;
    taken[name] = new Map(all.map((pid) => [pid, cpuMsOfPid(pid)]));
  }
  return { at: process.hrtime.bigint(), groups: taken, machine: machineTimes() };
}

export interface CpuWindow {
  windowMs: number;
  /** Per group: CPU ms spent in the window. A process born in it counts from 0. */
  cpuMs: Record<string, number>;
  /** Cores the whole machine kept busy on average over the window (every process, anyone's). */
  machineBusyCores: number;
}

export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): CpuWindow {
  const cpuMs: Record<string, number> = {};
  for (const [name, now] of Object.entries(after.groups)) {
    const then = before.groups[name] ?? new Map<number, number>();
    let spent = 0;
    for (const [pid, ms] of now) spent += Math.max(0, ms - (then.get(pid) ?? 0));
    cpuMs[name] = spent;
  }
  const windowMs = Number(after.at - before.at) / 1e6;
  // /proc/stat sums every core: busy ms over wall ms is how many cores were busy on average.
  const busy = after.machine.busyMs - before.machine.busyMs;
  return { windowMs, cpuMs, machineBusyCores: busy / Math.max(windowMs, 1) };
}
