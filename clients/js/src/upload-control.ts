/** Pause, resume and stop of an upload under way (see upload.ts). */

/** How much of the file has been sent: the bytes so far. */
export type Progress = (sent: number) => void;

/** Pause and resume, and stop; both abort the PUTs in flight. */
export class Control {
  paused = false;
  stopped = false;
  /** How many pauses there were: a PUT that ends with another count was aborted by one. */
  pauses = 0;
  #waiters: (() => void)[] = [];
  #inFlight = new Set<() => void>();

  /** Bytes would go on going out while the page says paused: the PUTs in flight are aborted. */
  pause(): void {
    if (this.paused || this.stopped) return;
    this.paused = true;
    this.pauses++;
    for (const abort of this.#inFlight) abort();
  }

  resume(): void {
    this.paused = false;
    for (const wake of this.#waiters.splice(0)) wake();
  }

  stop(): void {
    this.stopped = true;
    for (const abort of this.#inFlight) abort();
    for (const wake of this.#waiters.splice(0)) wake();
  }

  whileRunning(): Promise<void> {
    return this.paused && !this.stopped ? new Promise((resolve) => this.#waiters.push(resolve)) : Promise.resolve();
  }

  track(abort: () => void): () => void {
    this.#inFlight.add(abort);
    return () => this.#inFlight.delete(abort);
  }
}
