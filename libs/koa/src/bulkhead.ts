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
 *
 * `together` marks a piece that may share its place with others so marked: when a place frees and
 * the next pieces in turn are such, up to `batch` of them take it at once, started in one turn of
 * the event loop, and the place is freed when the last of them ends. Their writes asked for in
 * that turn go to the database as one operation (`@cs/mongo` together.ts), so a crowd of small
 * writes costs what a few would, and the turns stay fair: the group is taken in turn.
 *
 * A piece that must wait for something that is not work (`waitAside`, `@cs/lifecycle`) gives its
 * place to the next in line meanwhile. When its wait ends it takes the first place that frees,
 * before either line: it was let in already, and is never refused for the wait.
 */
import { HttpError } from '@cs/errors';
import { inPlace, type StepAside } from '@cs/lifecycle';
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
  /** Pieces run `together` that may share one place (1: each has its own). */
  batch?: number;
}

export interface RunOptions {
  /** The piece waits in the priority line. */
  priority?: boolean;
  /** The piece may share its place with other such pieces (`batch`), started at the same time. */
  together?: boolean;
}

export interface Bulkhead {
  /** Runs `work` once a place is free, in the client's turn; refuses with 429 or 503 when the line is full. */
  run<T>(client: string, work: () => Promise<T>, options?: RunOptions): Promise<T>;
  /** Places taken now (pieces sharing one count once), and pieces waiting, back from aside too. */
  load(): { running: number; waiting: number };
  /** Refuses every piece waiting now with `err`, at once: what they would run on is away. */
  refuseWaiting(err: Error): void;
}

export const bulkheadRefusals = counter(
  'bulkhead_refusals_total',
  'Pieces of expensive work refused because the line was full: for one client (429) or for all (503).',
  ['bulkhead', 'reason'],
);

/** A place, and how many pieces share it: it is freed when the last of them ends. */
interface Place {
  pieces: number;
}

/** A piece waiting in line: let it run in a place, or refuse it. */
interface Waiter {
  together: boolean;
  go(place: Place): void;
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

  /**
   * The next waiter in turn, and when it may run together, the waiters next in turn after it that
   * may too: up to `batch` in all.
   */
  shiftGroup(batch: number): Waiter[] {
    const first = this.shift();
    if (!first) return [];
    const group = [first];
    while (first.together && group.length < batch) {
      const client = this.turn[0];
      if (client === undefined || !this.queues.get(client)?.[0]?.together) break;
      group.push(this.shift() as Waiter);
    }
    return group;
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
  batch = 1,
}: BulkheadOptions): Bulkhead {
  const lines = { priority: new FairLine(), normal: new FairLine() };
  /** Pieces back from waiting aside, each for a place of its own: served before both lines. */
  const returning: Array<(place: Place) => void> = [];
  let running = 0;

  const refuse = (status: 429 | 503, reason: string) => {
    bulkheadRefusals.inc({ bulkhead: name, reason });
    return new HttpError(status, `Too many ${name} requests at once; try again shortly`, {
      headers: { 'Retry-After': String(retryAfterS) },
      expose: true,
    });
  };

  /** The place is handed to the next group in line, or freed when none waits. */
  const release = () => {
    const back = returning.shift();
    if (back) return back({ pieces: 1 });
    const group = lines.priority.size > 0 ? lines.priority.shiftGroup(batch) : lines.normal.shiftGroup(batch);
    if (group.length === 0) {
      running -= 1;
      return;
    }
    const place: Place = { pieces: group.length };
    for (const waiter of group) waiter.go(place);
  };

  const leave = (place: Place) => {
    place.pieces -= 1;
    if (place.pieces === 0) release();
  };

  /** A place for a piece back from waiting aside: a free one, else the first to free. */
  const retake = (): Promise<Place> => {
    if (running < concurrency) {
      running += 1;
      return Promise.resolve({ pieces: 1 });
    }
    return new Promise((resolve) => returning.push(resolve));
  };

  /**
   * Runs `work` in `place`, lending the place out while `work` waits aside: a wait begun while the
   * piece holds its place gives it back, and the piece goes on from a wait only once it holds one
   * again. Meant for waits one after another: other work of the piece that overlaps a wait (a
   * second branch of a Promise.all) runs without a place until the wait ends, and a wait that
   * begins while the piece is still taking its place again keeps it.
   */
  const runInPlace = async <T>(first: Place, work: () => Promise<T>): Promise<T> => {
    let place: Place | undefined = first;
    /** A place being taken again: one for all the waits that end meanwhile. */
    let taking: Promise<void> | undefined;
    let done = false;
    const hold = async () => {
      taking ??= retake().then((given) => {
        taking = undefined;
        // The work ended without awaiting this wait: the place it took goes again at once.
        if (done) leave(given);
        else place = given;
      });
      await taking;
    };
    const stepAside: StepAside = async (wait) => {
      if (place) {
        leave(place);
        place = undefined;
      }
      try {
        return await wait();
      } finally {
        if (!place && !done) await hold();
      }
    };
    try {
      return await inPlace(stepAside, work);
    } finally {
      done = true;
      if (place) leave(place);
      place = undefined;
    }
  };

  return {
    async run(client, work, { priority = false, together = false } = {}) {
      let place: Place;
      if (running >= concurrency) {
        const line = priority ? lines.priority : lines.normal;
        if (line.waitingFor(client) >= perClient) throw refuse(429, 'client');
        if (line.size >= total) throw refuse(503, 'full');
        // The place is handed over by release(): `running` counts it already.
        place = await new Promise<Place>((resolve, reject) => {
          const waiter: Waiter = {
            together,
            go(given) {
              clearTimeout(timer);
              resolve(given);
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
        place = { pieces: 1 };
      }
      return runInPlace(place, work);
    },

    load: () => ({ running, waiting: lines.priority.size + lines.normal.size + returning.length }),

    refuseWaiting(err) {
      for (const waiter of [...lines.priority.takeAll(), ...lines.normal.takeAll()]) waiter.refuse(err);
    },
  };
}
