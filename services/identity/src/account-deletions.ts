/**
 * Deleting an account everywhere. Identity owns the account; posts, notes and files own what it
 * made, each in its own database. So a deletion is an event, kept in identity's database until
 * every owner has confirmed it (an outbox):
 *
 * 1. the entry is written first, naming every owner still to confirm; then the user is deleted.
 *    A crash between the two leaves an entry whose user still exists: delivery deletes the user
 *    before anything else, so a recorded deletion is always finished, and a user is never
 *    without a record of why their data is going;
 * 2. each owner is told `POST /internal/users/deleted` with a short token of the deleted user's
 *    (as notes asks files for a release), and deletes idempotently; a 204 is its confirmation;
 * 3. an owner that did not confirm is tried again with backoff (1 s doubling up to a minute),
 *    until it does; the entry goes once all have.
 *
 * Delivery is at least once: two replicas, or the immediate attempt and the timer, may both send
 * one event (a taken entry is only leased, and FerretDB's filtered updates are not atomic), which
 * the owners' idempotent deletes make harmless. So no turns are needed here.
 */
import { signToken } from '@cs/auth';
import type { Logger } from '@cs/log';
import { backlogOf, trusted } from '@cs/mongo';
import { tracedFetch } from '@cs/telemetry';
import type { Connection, Model } from 'mongoose';
import { Schema } from 'mongoose';
import type { UserModel } from './model';

export const OWNERS = ['posts', 'notes', 'files'] as const;
export type Owner = (typeof OWNERS)[number];

/** How long a taken entry is left to its taker before another pass may take it. */
const LEASE_MS = 30_000;
const MAX_BACKOFF_MS = 60_000;
const BATCH = 20;

interface DeletionRecord {
  /** The deleted user's id. */
  _id: string;
  /** Owners that have not confirmed yet. */
  pending: Owner[];
  attempts: number;
  dueAt: Date;
  lastError?: string;
  createdAt: Date;
}

const deletionSchema = new Schema<DeletionRecord>(
  {
    _id: { type: String, required: true },
    pending: { type: [String], required: true },
    attempts: { type: Number, default: 0 },
    dueAt: { type: Date, required: true },
    lastError: String,
    createdAt: { type: Date, required: true },
  },
  { strict: 'throw', versionKey: false, collection: 'account_deletions' },
);
deletionSchema.index({ dueAt: 1 });

export interface AccountDeletions {
  /** Records the deletion of this user; idempotent. */
  record(userId: string): Promise<void>;
  /** Delivers one user's deletion now, without making the caller wait. */
  deliverSoon(userId: string): void;
  /** Delivers due entries (at most `limit`); returns how many were finished. */
  drain(limit?: number): Promise<number>;
  /** How many deletions are not confirmed by every owner yet, and since when the oldest waits. */
  backlog(): Promise<{ entries: number; oldest?: Date }>;
}

export function createAccountDeletions({
  connection,
  users,
  forget,
  owners,
  secret,
  timeoutMs,
  logger,
}: {
  connection: Connection;
  users: UserModel;
  /** What identity itself keeps of a user besides the account (its password reset). */
  forget: (userId: string) => Promise<void>;
  /** Each owner's base URL. */
  owners: Record<Owner, string>;
  secret: string;
  timeoutMs: number;
  logger: Logger;
}): AccountDeletions {
  const deletions: Model<DeletionRecord> =
    (connection.models.AccountDeletion as Model<DeletionRecord> | undefined) ??
    connection.model<DeletionRecord>('AccountDeletion', deletionSchema);

  async function tell(owner: Owner, userId: string): Promise<void> {
    const token = signToken(userId, { secret, expiresIn: '5m' });
    const res = await tracedFetch(`${owners[owner]}/internal/users/deleted`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.arrayBuffer();
    if (res.status !== 204) throw new Error(`${owner} answered ${res.status}`);
  }

  /** Takes the entry for LEASE_MS and delivers it; true when every owner has confirmed. */
  async function deliver(entry: DeletionRecord): Promise<boolean> {
    const attempts = entry.attempts + 1;
    await deletions.updateOne({ _id: entry._id }, { $set: { dueAt: new Date(Date.now() + LEASE_MS), attempts } });
    // Finishes a deletion whose request stopped between recording it and deleting the user.
    await users.deleteOne({ _id: entry._id });
    await forget(entry._id);
    const results = await Promise.allSettled(entry.pending.map((owner) => tell(owner, entry._id)));
    const failed = entry.pending.filter((_, i) => results[i]?.status === 'rejected');
    if (failed.length === 0) {
      await deletions.deleteOne({ _id: entry._id });
      logger.info({ userId: entry._id, attempts }, 'account deleted everywhere');
      return true;
    }
    const errors = results.flatMap((r) => (r.status === 'rejected' ? [String((r.reason as Error).message)] : []));
    const backoff = Math.min(1000 * 2 ** (attempts - 1), MAX_BACKOFF_MS);
    await deletions.updateOne(
      { _id: entry._id },
      { $set: { pending: failed, dueAt: new Date(Date.now() + backoff), lastError: errors.join('; ') } },
    );
    logger.warn({ userId: entry._id, attempts, pending: failed, errors }, 'account deletion not confirmed; will retry');
    return false;
  }

  return {
    async record(userId) {
      const at = new Date();
      await deletions.updateOne(
        { _id: userId },
        { $setOnInsert: { pending: [...OWNERS], attempts: 0, dueAt: at, createdAt: at } },
        { upsert: true },
      );
    },

    deliverSoon(userId) {
      void deletions
        .findById(userId)
        .lean<DeletionRecord>()
        .then((entry) => entry && deliver(entry))
        .catch((err: unknown) => logger.warn({ err }, 'immediate account deletion failed; the outbox will retry'));
    },

    async drain(limit = 100) {
      let done = 0;
      for (let tried = 0; tried < limit; ) {
        const due = await deletions
          .find({ dueAt: trusted({ $lte: new Date() }) })
          .sort({ dueAt: 1 })
          .limit(Math.min(BATCH, limit - tried))
          .lean<DeletionRecord[]>();
        if (due.length === 0) break;
        for (const entry of due) {
          tried += 1;
          if (await deliver(entry)) done += 1;
        }
      }
      return done;
    },

    backlog: () => backlogOf(deletions),
  };
}
