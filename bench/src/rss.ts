import { readFileSync } from 'node:fs';

/** A process's resident memory in MB (one decimal), from /proc; 0 when it is gone. */
export function rssMb(pid: number): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return Math.round(Number(line?.split(/\s+/)[1] ?? 0) / 102.4) / 10;
  } catch {
    return 0;
  }
}
