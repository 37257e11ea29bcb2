/**
 * Failed logins slow down per account, whichever addresses they come from (the gateway's limit
 * is per address, so an attacker with many addresses would otherwise never meet it). After
 * FREE_FAILURES failed logins for one e-mail address, each further attempt must wait a delay that
 * doubles with every failure, from FIRST_DELAY_MS (2 s) up to MAX_DELAY_MS (15 min); an attempt inside the delay gets the
 * gateway's own `429 {error}` with `Retry-After`, and its password is not even checked. Growing
 * delays rather than a lockout (OWASP's Authentication Cheat Sheet): an attacker cannot lock a
 * person out for long, and a person who mistyped a few times waits seconds.
 *
 * The address need not belong to an account, and the answers are the same either way, so the
 * throttle tells nobody whether an account exists. A success forgets the failures; so does an
 * hour without one.
 *
 * One document per address, counted with `$inc`. Attempts that arrive at the same moment are
 * all checked before any of them fails, on any database, and FerretDB may lose an increment when
 * two land together: a burst of N parallel attempts can get N tries through one step. The delays
 * still grow with every failure that lands, so this slows a burst down; it never stops it dead.
 */
import { HttpError, messages as httpMessages } from '@cs/errors';
import type { Connection, Model } from 'mongoose';
import { Schema } from 'mongoose';

export const FREE_FAILURES = 5;
export const FIRST_DELAY_MS = 2000;
export const MAX_DELAY_MS = 15 * 60_000;
const FORGET_AFTER_MS = 60 * 60_000;

interface FailureRecord {
  /** The normalized e-mail address. */
  _id: string;
  failures: number;
  lastFailureAt: Date;
}

const failureSchema = new Schema<FailureRecord>(
  { _id: { type: String, required: true }, failures: { type: Number, required: true }, lastFailureAt: Date },
  { strict: 'throw', versionKey: false, collection: 'login_failures' },
);

/** How long after its last failure an account must wait, given how many failures it has. */
export function delayAfter(failures: number): number {
  if (failures < FREE_FAILURES) return 0;
  return Math.min(FIRST_DELAY_MS * 2 ** (failures - FREE_FAILURES), MAX_DELAY_MS);
}

export interface LoginThrottle {
  /** Throws the 429 when this address must still wait. */
  check(email: string): Promise<void>;
  failed(email: string): Promise<void>;
  succeeded(email: string): Promise<void>;
}

export function createLoginThrottle(connection: Connection, now: () => number = Date.now): LoginThrottle {
  const failures: Model<FailureRecord> =
    (connection.models.LoginFailure as Model<FailureRecord> | undefined) ??
    connection.model<FailureRecord>('LoginFailure', failureSchema);

  return {
    async check(email) {
      const record = await failures.findById(email).lean();
      if (!record) return;
      const since = now() - record.lastFailureAt.getTime();
      if (since >= FORGET_AFTER_MS) return;
      const wait = delayAfter(record.failures) - since;
      if (wait > 0) {
        throw new HttpError(429, httpMessages.tooManyRequests, {
          headers: { 'Retry-After': String(Math.ceil(wait / 1000)) },
        });
      }
    },

    async failed(email) {
      const at = new Date(now());
      const record = await failures.findById(email, { lastFailureAt: 1 }).lean();
      const stale = record !== null && at.getTime() - record.lastFailureAt.getTime() >= FORGET_AFTER_MS;
      await failures.updateOne(
        { _id: email },
        stale ? { $set: { failures: 1, lastFailureAt: at } } : { $inc: { failures: 1 }, $set: { lastFailureAt: at } },
        { upsert: true },
      );
    },

    async succeeded(email) {
      await failures.deleteOne({ _id: email });
    },
  };
}
