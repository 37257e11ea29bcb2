/**
 * One budget for what the streams of this process hold for their clients. A stream alone is
 * bounded (event-stream.ts), but thousands of unread streams, each under its own bound, could
 * still hold more than the heap has: one process hosting every part then dies with all of them.
 * So, at every sweep (each second, and at once when what was just queued may pass the budget):
 *
 * - **Stalled**: a stream with bytes waiting whose socket has taken nothing for `stallMs` is cut.
 * - **Over the budget**: past `maxBytes` waiting in all, the streams holding the most (the
 *   slowest readers) are cut until the rest fit.
 * - **Memory pressure**: past `shedAtHeapPercent` of the heap's limit in use, every stream that
 *   holds bytes is cut, and while the pressure lasts, a tenth of the others each sweep, the
 *   newest first: long before the heap's limit, the process sheds streams rather than die.
 *
 * A stream cut is a stream whose socket is destroyed: its client reconnects with Last-Event-ID and
 * loses nothing. What a stream holds is counted as Node counts it (`writableLength`): a frame
 * shared by many streams counts once for each, so the budget errs on the side of memory.
 */
import { getHeapStatistics } from 'node:v8';
import type { EventStream } from './event-stream';

export interface StreamBudgetOptions {
  /** Bytes all streams may hold waiting for their clients, together. */
  maxBytes: number;
  /** A stream with bytes waiting whose socket takes nothing this long is cut. */
  stallMs: number;
  /** The share of the heap's limit in use (percent) past which streams are shed. */
  shedAtHeapPercent: number;
  /** The share of the heap's limit in use now, in percent (V8's, unless told). */
  heapUsedPercent?: () => number;
  /** Told of each stream cut, and why. */
  onCut?: (reason: CutReason) => void;
}

export type CutReason = 'stalled' | 'over-budget' | 'memory-pressure';

export interface StreamBudget {
  /** Watches `stream` until it ends. */
  watch(stream: EventStream): void;
  /** Bytes just written to streams: a sweep comes at once when they may take the total past the budget. */
  queued(bytes: number): void;
  /** Checks every stream now (each second on its own). */
  sweep(): void;
  /** How many streams are watched. */
  readonly size: number;
  stop(): void;
}

const SWEEP_EVERY_MS = 1_000;
/** Under memory pressure, the share of the streams shed each sweep. */
const SHED_SHARE = 0.1;

interface Watched {
  stream: EventStream;
  /** What its socket had taken when last seen taking something (or holding nothing). */
  taken: number;
  progressedAt: number;
}

export function heapUsedPercent(): number {
  const { used_heap_size, heap_size_limit } = getHeapStatistics();
  return (100 * used_heap_size) / heap_size_limit;
}

export function createStreamBudget({
  maxBytes,
  stallMs,
  shedAtHeapPercent,
  heapUsedPercent: heapNow = heapUsedPercent,
  onCut,
}: StreamBudgetOptions): StreamBudget {
  const watched = new Map<EventStream, Watched>();
  /** What the streams held at the last sweep, plus what was queued since. */
  let estimate = 0;
  let sweepSoon: NodeJS.Immediate | undefined;

  const cut = (entry: Watched, reason: CutReason) => {
    watched.delete(entry.stream);
    entry.stream.cut();
    onCut?.(reason);
  };

  const sweep = () => {
    if (sweepSoon) clearImmediate(sweepSoon);
    sweepSoon = undefined;
    const now = Date.now();
    const holding: { entry: Watched; buffered: number }[] = [];
    let total = 0;
    for (const entry of watched.values()) {
      const { stream } = entry;
      const buffered = stream.buffered;
      const taken = stream.taken;
      if (buffered === 0 || taken > entry.taken) {
        entry.taken = taken;
        entry.progressedAt = now;
      }
      if (buffered === 0) continue;
      if (now - entry.progressedAt >= stallMs) {
        cut(entry, 'stalled');
        continue;
      }
      holding.push({ entry, buffered });
      total += buffered;
    }
    const pressed = heapNow() >= shedAtHeapPercent;
    if (pressed || total > maxBytes) {
      holding.sort((a, b) => b.buffered - a.buffered);
      for (const { entry, buffered } of holding) {
        if (!pressed && total <= maxBytes) break;
        cut(entry, pressed ? 'memory-pressure' : 'over-budget');
        total -= buffered;
      }
    }
    if (pressed && holding.length === 0) {
      const newestFirst = [...watched.values()].reverse();
      for (const entry of newestFirst.slice(0, Math.ceil(newestFirst.length * SHED_SHARE))) {
        cut(entry, 'memory-pressure');
      }
    }
    estimate = total;
  };

  const timer = setInterval(sweep, SWEEP_EVERY_MS);
  timer.unref();

  return {
    watch(stream) {
      watched.set(stream, { stream, taken: stream.taken, progressedAt: Date.now() });
      stream.onEnd(() => watched.delete(stream));
    },
    queued(bytes) {
      estimate += bytes;
      // After the writes the kernel took at once have settled (their callbacks run before
      // setImmediate's): only what is really waiting is counted.
      if (estimate > maxBytes && !sweepSoon) sweepSoon = setImmediate(sweep);
    },
    sweep,
    get size() {
      return watched.size;
    },
    stop() {
      clearInterval(timer);
      if (sweepSoon) clearImmediate(sweepSoon);
    },
  };
}
