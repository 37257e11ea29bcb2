/**
 * A process's peak resident memory over a stretch of time: its VmRSS sampled from /proc every
 * `everyMs`, the highest kept, and its VmHWM (the kernel's own peak since the process started) at
 * the end. The attacks of scenario 11 report it for the one process they are run against.
 */
import { readFileSync } from 'node:fs';

/** A field of /proc/<pid>/status in MB (one decimal); 0 when the process is gone. */
function statusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${field}:`));
    return Math.round(Number(line?.split(/\s+/)[1] ?? 0) / 102.4) / 10;
  } catch {
    return 0;
  }
}

export interface PeakMemory {
  beforeMb: number;
  peakMb: number;
  afterMb: number;
  /** The process's peak since it started (VmHWM), at the end. */
  hwmMb: number;
}

/** Starts watching `pid`; `stop()` answers what it saw. */
export function watchPeakMemory(pid: number, everyMs = 100): { stop(): PeakMemory } {
  const beforeMb = statusMb(pid, 'VmRSS');
  let peakMb = beforeMb;
  const timer = setInterval(() => {
    peakMb = Math.max(peakMb, statusMb(pid, 'VmRSS'));
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const afterMb = statusMb(pid, 'VmRSS');
      return { beforeMb, peakMb: Math.max(peakMb, afterMb), afterMb, hwmMb: statusMb(pid, 'VmHWM') };
    },
  };
}
