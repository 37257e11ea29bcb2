/**
 * A bulkhead for expensive work (a bcrypt hash, a list page computed from the database): at most
 * `concurrency` pieces run at once, the rest wait in line, and the line is served fairly, one
 * client's piece after another's in turn, so one client sending many can delay others by at most
 * one piece each. A client whose own line is full gets 429, and when the whole line is full
 * everyone gets 503, both with Retry-After: refused at once, never left to hang.
 *
 * `priority` is a second line served before the first: for clients with a standing that a crowd
 * of new clients cannot have (a device that has logged in before, say). Each line holds up to
 * `total` waiting pieces of its own, so a crowd that fills the first line never keeps a priority
 * piece out: it waits only for the pieces running and the priority pieces ahead of it.
 */
import { HttpError } from '@cs/errors';
import { counter } from '@cs/telemetry';

export interface BulkheadOptions {
  /** The name in metrics and in the refusal's message. */
  name: string;
  concurrency: number;
  /** Pieces one client may have waiting. */
  perClient: number;
  /** Pieces all clients together may have waiting, in each line. */
  total: number;
  /** How long a piece may wait in line before it is refused (5 s). */
  maxWaitMs?: number;
  retryAfterS?: number;
}

export interface Bulkhead {
  /** Runs `work` once a place is free, in the client's turn; refuses with 429 or 503 when the line is full. */
  run<T>(client: string, work: () => Promise<T>, options?: { priority?: boolean }): Promise<T>;
  /** Pieces running and waiting now. */
  load(): { running: number; waiting: number };
  /** Refuses every piece waiting now with `err`, at once: what they would run on is away. */
  refuseWaiting(err: Error): void;
}

export const bulkheadRefusals = counter(
  'bulkhead_refusals_total',
  'Pieces of expensive work refused because the line was full: for one client (429) or for all (503).',
  ['bulkhead', 'reason'],
);

/** A piece waiting in line: let it run, or refuse it. */
interface Waiter {
  go(): void;
  refuse(err: Error): void;
}

/** One line: per client a queue, and the clients with something waiting, in the order they are served. */
class FairLine {
  private readonly queues = new Map<string, Waiter[]>();
  private readonly turn: string[] = [];
  size = 0;

  waitingFor(client: string): number {
    return this.queues.get(client)?.length ?? 0;
  }

  /** Takes a waiter out of the line before its turn: it gave up. */
  remove(client: string, waiter: Waiter): void {
    const queue = this.queues.get(client);
    const at = queue?.indexOf(waiter) ?? -1;
    if (!queue || at < 0) return;
    queue.splice(at, 1);
    this.size -= 1;
    if (queue.length > 0) return;
    this.queues.delete(client);
    this.turn.splice(this.turn.indexOf(client), 1);
  }

  push(client: string, waiter: Waiter): void {
    const queue = this.queues.get(client);
    if (queue) queue.push(waiter);
    else {
      this.queues.set(client, [waiter]);
      this.turn.push(client);
    }
    this.size += 1;
  }

  /** The next client's first waiter; that client goes to the back of the turn if it has more. */
  shift(): Waiter | undefined {
    const client = this.turn.shift();
    if (client === undefined) return undefined;
    const queue = this.queues.get(client) as Waiter[];
    const waiter = queue.shift() as Waiter;
    if (queue.length > 0) this.turn.push(client);
    else this.queues.delete(client);
    this.size -= 1;
    return waiter;
  }

  /** Every waiter, in no particular order; the line is left empty. */
  takeAll(): Waiter[] {
    const all = [...this.queues.values()].flat();
    this.queues.clear();
    this.turn.length = 0;
    this.size = 0;
    return all;
  }
}

export function createBulkhead({
  name,
  concurrency,
  perClient,
  total,
  maxWaitMs = 5_000,
  retryAfterS = 1,
}: BulkheadOptions): Bulkhead {
  const lines = { priority: new FairLine(), normal: new FairLine() };
  let running = 0;

  const refuse = (status: 429 | 503, reason: string) => {
    bulkheadRefusals.inc({ bulkhead: name, reason });
    return new HttpError(status, `Too many ${name} requests at once; try again shortly`, {
      headers: { 'Retry-After': String(retryAfterS) },
      expose: true,
    });
  };

  const release = () => {
    const next = lines.priority.shift() ?? lines.normal.shift();
    if (next) next.go();
    else running -= 1;
  };

  return {
    async run(client, work, { priority = false } = {}) {
      if (running >= concurrency) {
        const line = priority ? lines.priority : lines.normal;
        if (line.waitingFor(client) >= perClient) throw refuse(429, 'client');
        if (line.size >= total) throw refuse(503, 'full');
        // The place is handed over by release(): `running` counts it already.
        await new Promise<void>((resolve, reject) => {
          const waiter: Waiter = {
            go() {
              clearTimeout(timer);
              resolve();
            },
            refuse(err) {
              clearTimeout(timer);
              reject(err);
            },
          };
          const timer = setTimeout(() => {
            line.remove(client, waiter);
            reject(refuse(503, 'waited'));
          }, maxWaitMs);
          line.push(client, waiter);
        });
      } else {
        running += 1;
      }
      try {
        return await work();
      } finally {
        release();
      }
    },

    load: () => ({ running, waiting: lines.priority.size + lines.normal.size }),

    refuseWaiting(err) {
      for (const waiter of [...lines.priority.takeAll(), ...lines.normal.takeAll()]) waiter.refuse(err);
    },
  };
}
