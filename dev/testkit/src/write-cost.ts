/**
 * What a write costs the database: every operation a service sends through its mongoose
 * connection, counted as `<collection>.<method>` (mongoose's debug hook). Reads a test makes
 * through the driver directly, to wait for the write's effects, are not seen by the hook and so
 * not counted. Each operation is a few milliseconds of CPU on FerretDB (`npm run bench`).
 */
import type { Connection } from 'mongoose';
import { eventually } from './eventually';

export interface WriteCost {
  /**
   * Runs `write`, waits until `settled` holds for what it answered (its event on the bus, its
   * outbox entry gone: the work it left for after the response), and answers every operation
   * sent meanwhile, sorted. `what` names the wait, for its timeout's message.
   */
  of<T>(
    write: () => Promise<T>,
    settled: (written: T) => Promise<boolean>,
    what: (written: T) => string,
  ): Promise<string[]>;
}

/** Starts counting the operations `connection` sends; call before any write to be counted. */
export function countWriteCost(connection: Connection): WriteCost {
  const operations: string[] = [];
  connection.set('debug', (collection: string, method: string) => {
    operations.push(`${collection}.${method}`);
  });
  return {
    async of(write, settled, what) {
      operations.length = 0;
      const written = await write();
      await eventually(what(written), () => settled(written), Boolean);
      return [...operations].sort();
    },
  };
}
