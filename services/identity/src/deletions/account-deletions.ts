/**
 * Deleting an account everywhere. Identity owns the account; posts, notes and files own what it
 * made, each in its own database. So a deletion is an entry of identity's outbox (`@cs/outbox`),
 * kept until every owner has confirmed it:
 *
 * 1. the entry is written first, naming every owner still to confirm; then the user is deleted.
 *    A crash between the two leaves an entry whose user still exists: its handler deletes the
 *    user before anything else, so a recorded deletion is always finished, and a user is never
 *    without a record of why their data is going;
 * 2. each owner is told `POST /internal/users/deleted` with a short token of the deleted user's
 *    (as notes asks files for a release), and deletes idempotently; a 204 is its confirmation;
 * 3. the owners that did not confirm stay on the entry, which the outbox tries again with backoff
 *    until they do; the entry goes once all have.
 */
import { signToken } from '@cs/auth';
import type { Logger } from '@cs/log';
import { createOutbox } from '@cs/outbox';
import { type Fetch, traced } from '@cs/telemetry';
import type { Connection } from 'mongoose';
import type { UserModel } from '../accounts/model';
import { accountDeletionModel, type DeletionRecord, OWNERS, type Owner } from './model';

export interface AccountDeletions {
  /** Records the deletion of this user; idempotent. */
  record(userId: string): Promise<void>;
  /** Delivers one user's deletion now, without making the caller wait. */
  deliverSoon(userId: string): void;
  /** Polls for due entries every `intervalMs`; returns the function that stops it. */
  start(intervalMs: number): () => Promise<void>;
  /** How many deletions are not confirmed by every owner yet, and since when the oldest waits. */
  backlog(): Promise<{ entries: number; oldest?: Date }>;
}

export function createAccountDeletions({
  connection,
  users,
  forget,
  owners,
  fetch,
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
  /** How the owners are reached (over the network, or in memory in one process). */
  fetch: Fetch;
  secret: string;
  timeoutMs: number;
  logger: Logger;
}): AccountDeletions {
  const deletions = accountDeletionModel(connection);
  const call = traced(fetch);

  async function tell(owner: Owner, userId: string): Promise<void> {
    const token = signToken(userId, { secret, expiresIn: '5m' });
    const res = await call(`${owners[owner]}/internal/users/deleted`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.arrayBuffer();
    if (res.status !== 204) throw new Error(`${owner} answered ${res.status}`);
  }

  const outbox = createOutbox({
    name: 'account_deletions',
    entries: deletions,
    what: 'account deletion',
    logger,
    async handle({ _id: userId, pending, attempts }) {
      // Finishes a deletion whose request stopped between recording it and deleting the user.
      await users.deleteOne({ _id: userId });
      await forget(userId);
      const results = await Promise.allSettled(pending.map((owner) => tell(owner, userId)));
      const failed = pending.filter((_, i) => results[i]?.status === 'rejected');
      if (failed.length > 0) {
        await deletions.updateOne({ _id: userId }, { $set: { pending: failed } });
        const errors = results.flatMap((r) => (r.status === 'rejected' ? [String((r.reason as Error).message)] : []));
        throw new Error(errors.join('; '));
      }
      logger.info({ userId, attempts }, 'account deleted everywhere');
    },
  });

  return {
    async record(userId) {
      await outbox.enqueue({ _id: userId, pending: [...OWNERS] });
    },

    deliverSoon(userId) {
      void deletions
        .findById(userId)
        .lean<DeletionRecord>()
        .then((entry) => entry && outbox.dispatch(entry))
        .catch((err: unknown) => logger.warn({ err }, 'immediate account deletion failed; the outbox will retry'));
    },

    start: (intervalMs) => outbox.start(intervalMs),
    backlog: () => outbox.backlog(),
  };
}
