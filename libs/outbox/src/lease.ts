/**
 * Leases on outbox entries, decided by a unique index: FerretDB's filtered updates are not
 * atomic (two racers both "win" a `{_id, dueAt <= now}` update), but both servers refuse a
 * second insert of one `_id`. A worker that read an entry at `attempts` a inserts
 * `lease:<outbox>:<id>#<a+1>`; the one insert that succeeds holds try a+1, the others go on.
 *
 * Leases are kept in the service's `turns` collection, as `{_id, at}` like a turn, and pruned
 * with the turns an hour later (`@cs/mongo` turns): long past any reader of the entry as it was.
 * A lease is never deleted early, so a reader that saw the entry before its holder finished it
 * still finds the lease taken.
 */
import { isDuplicateKey } from '@cs/mongo';
import type { Connection } from 'mongoose';

interface LeaseDoc {
  _id: string;
  at: Date;
}

/** Tries skipped past dead holders in one take, at most. */
const MAX_SKIPS = 8;

export interface Leases {
  /**
   * Takes try `attempts + 1` of entry `id`, read at `readAt`: the try number now held, or
   * undefined when another worker holds it. A lease taken more than `leaseMs` before the read
   * whose entry still shows the try before belongs to a holder that died before recording its
   * take: it is skipped. A read older than half a lease is not acted on (read again).
   */
  take(id: string, attempts: number, readAt: number): Promise<number | undefined>;
}

export function createLeases(
  connection: Connection,
  outbox: string,
  { leaseMs, collectionName = 'turns' }: { leaseMs: number; collectionName?: string },
): Leases {
  const leases = connection.collection<LeaseDoc>(collectionName);
  return {
    async take(id, attempts, readAt) {
      for (let next = attempts + 1; next <= attempts + 1 + MAX_SKIPS; next++) {
        if (Date.now() - readAt > leaseMs / 2) return undefined;
        const _id = `lease:${outbox}:${id}#${next}`;
        try {
          await leases.insertOne({ _id, at: new Date() });
          return next;
        } catch (err) {
          if (!isDuplicateKey(err)) throw err;
        }
        const holder = await leases.findOne({ _id });
        if (!holder || holder.at.getTime() > readAt - leaseMs) return undefined;
      }
      return undefined;
    },
  };
}
