import type { Logger } from '@cs/log';
import type { Model } from 'mongoose';
import type { OutboxEntry } from './entry';

/** An entry's fields of the domain's own, and the id it may give. */
export type Own<E extends OutboxEntry> = Omit<E, keyof OutboxEntry> & { _id?: E['_id'] };

/** What an outbox is made of (createOutbox): its entries, and what handles each. */
export interface OutboxOptions<E extends OutboxEntry, W = never> {
  /** The outbox's name: its metrics label and its leases' prefix. */
  name: string;
  /** The entries' collection, with the domain's own fields. */
  entries: Model<E>;
  /**
   * Does what the entry asks. May run more than once for one entry: it must be idempotent, and
   * settle the entry against the document as it is now (outbox.ts), or as `written` when the
   * dispatch hands it what the write wrote. Throws to be tried again.
   */
  handle(entry: E, written?: W): Promise<void>;
  /** A field naming the document an entry is about: that document's entries go in order. */
  orderBy?: keyof Own<E> & string;
  /** What a try does, for the log: "<what> failed; will retry". */
  what: string;
  logger: Logger;
  leaseMs?: number;
}
