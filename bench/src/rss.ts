import { readdirSync, readFileSync } from 'node:fs';

/** A figure in kB of a /proc file (`<key>: <n> kB`), in MB with one decimal; 0 when the process is gone. */
function procMb(file: string, key: string): number {
  try {
    const line = readFileSync(file, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(key));
    return Math.round(Number(line?.split(/\s+/)[1] ?? 0) / 102.4) / 10;
  } catch {
    return 0;
  }
}

/** A process's resident memory in MB (one decimal), from /proc; 0 when it is gone. */
export function rssMb(pid: number): number {
  return procMb(`/proc/${pid}/status`, 'VmRSS:');
}

/**
 * A process's proportional set size in MB: its private pages, and its share of pages it shares
 * (Node's own code, with every other Node process). The sum over processes is what they take
 * together, which a sum of RSS overstates. 0 when it is gone.
 */
export function pssMb(pid: number): number {
  return procMb(`/proc/${pid}/smaps_rollup`, 'Pss:');
}

/** The process and all its descendants (a PostgreSQL server and its backends). */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name, in parentheses, may hold spaces: the fields start after its ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const all: number[] = [];
  const visit = (p: number) => {
    all.push(p);
    for (const c of children.get(p) ?? []) visit(c);
  };
  visit(pid);
  return all;
}

/** RSS and PSS in MB, summed over the processes. */
export function memoryOf(pids: number[]): { rssMb: number; pssMb: number } {
  const sum = (f: (pid: number) => number) => Math.round(pids.reduce((n, pid) => n + f(pid), 0) * 10) / 10;
  return { rssMb: sum(rssMb), pssMb: sum(pssMb) };
}

/** A process's command name (/proc/<pid>/comm: node, postgres, ferretdb…); '' when it is gone. */
export function processName(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}
