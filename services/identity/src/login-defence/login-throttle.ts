/**
 * Failed logins slow down per account, whichever addresses they come from (the gateway's limit
 * is per address, so an attacker with many addresses would otherwise never meet it), without
 * handing an attacker a way to lock a person out. Two counts, both over the last hour:
 *
 * - per account and client address: after FREE_FAILURES failures from one address, that address
 *   waits before each further attempt, FIRST_DELAY_MS (2 s) doubling up to MAX_DELAY_MS (15 min);
 * - per account, from every address: after ACCOUNT_FREE_FAILURES, every address waits the same way
 *   but at most ACCOUNT_MAX_DELAY_MS (1 min), except one that has logged in to this account
 *   before (a known address, remembered KNOWN_FOR_MS). A botnet gets about one guess a minute per
 *   account; the person, from where they usually log in, is not slowed at all.
 *
 * A login from a trusted device (device-tokens.ts: it presents a token issued to this account by a
 * successful login, and that token has failed fewer than DEVICE_FREE_FAILURES times in the last
 * hour) waits for neither count: the person is not slowed by what others did, from anywhere.
 * Its failures are counted per device too, and a device past DEVICE_FREE_FAILURES is trusted no
 * more: its logins are counted and delayed like anyone's (OWASP's device lockout).
 *
 * An attempt inside a delay gets the gateway's own `429 {error}` with `Retry-After`, and its
 * password is not checked. Growing delays rather than a lockout, as OWASP's Authentication Cheat
 * Sheet advises. An address that has no account is counted exactly like one that has, so the
 * answers tell nobody whether an account exists; a success resets only its own address's count.
 * Only a well-formed address is counted (nothing else can be an account), and records are keyed
 * by a hash, so their size is fixed and no address is stored; they are deleted once forgotten.
 *
 * One document per count, incremented with `$inc`. Attempts sent at the same moment are all
 * checked before any of them fails, on any database, and FerretDB may lose an increment when two
 * land together: a burst of N parallel attempts can get N tries through one step. The delays still
 * grow with every failure that lands; this slows a burst down, it never stops it dead.
 */
import { createHash } from 'node:crypto';
import { HttpError, messages as httpMessages } from '@cs/errors';
import { trusted, upsertRacing } from '@cs/mongo';
import type { Connection } from 'mongoose';
import { loginFailureModel, loginKnownModel } from './model';

export const FREE_FAILURES = 5;
export const ACCOUNT_FREE_FAILURES = 50;
export const FIRST_DELAY_MS = 2000;
export const MAX_DELAY_MS = 15 * 60_000;
export const ACCOUNT_MAX_DELAY_MS = 60_000;
/** Failures in the last hour after which a device token is no longer trusted. */
export const DEVICE_FREE_FAILURES = 5;
/** Failures older than this are forgotten (and their record pruned). */
export const FORGET_AFTER_MS = 60 * 60_000;
/** How long an address that logged in to an account stays known to it. */
export const KNOWN_FOR_MS = 30 * 24 * 60 * 60_000;

/** How long after its last failure a count must wait, given its failures, threshold and cap. */
export function delayAfter(failures: number, free = FREE_FAILURES, cap = MAX_DELAY_MS): number {
  if (failures < free) return 0;
  return Math.min(FIRST_DELAY_MS * 2 ** Math.min(failures - free, 30), cap);
}

const key = (...parts: string[]) => createHash('sha256').update(parts.join('\n')).digest('base64url');

export interface LoginThrottle {
  /**
   * Throws the 429 when this account must still wait, from this client address; never for a
   * trusted device (`trusts`).
   */
  check(email: string, address: string, trustedDevice?: boolean): Promise<void>;
  /** `device`: the id of the device token the login presented, if any; its failures are counted too. */
  failed(email: string, address: string, device?: string): Promise<void>;
  /** Whether a device token still is trusted: it has failed fewer than DEVICE_FREE_FAILURES times in the last hour. */
  trusts(device: string): Promise<boolean>;
  succeeded(email: string, address: string): Promise<void>;
  /**
   * Deletes what has been forgotten: failures of more than an hour ago, addresses known for
   * longer than KNOWN_FOR_MS. Returns how many records went.
   */
  prune(): Promise<number>;
  /** Prunes every `intervalMs` (10 minutes by default); returns the function that stops it. */
  startPruning(onError: (err: unknown) => void, intervalMs?: number): () => void;
}

export function createLoginThrottle(connection: Connection, now: () => number = Date.now): LoginThrottle {
  const failures = loginFailureModel(connection);
  const known = loginKnownModel(connection);

  /** How long this count must still wait, in ms (0: not at all). */
  const wait = async (id: string, free: number, cap: number): Promise<number> => {
    const record = await failures.findById(id).lean();
    if (!record) return 0;
    const since = now() - record.lastFailureAt.getTime();
    return since >= FORGET_AFTER_MS ? 0 : Math.max(0, delayAfter(record.failures, free, cap) - since);
  };

  const count = async (id: string, at: Date) => {
    const record = await failures.findById(id, { lastFailureAt: 1 }).lean();
    const stale = record !== null && at.getTime() - record.lastFailureAt.getTime() >= FORGET_AFTER_MS;
    await upsertRacing(() =>
      failures.updateOne(
        { _id: id },
        stale ? { $set: { failures: 1, lastFailureAt: at } } : { $inc: { failures: 1 }, $set: { lastFailureAt: at } },
        { upsert: true },
      ),
    );
  };

  const throttle: LoginThrottle = {
    async check(email, address, trustedDevice = false) {
      if (trustedDevice) return;
      let ms = await wait(key('pair', email, address), FREE_FAILURES, MAX_DELAY_MS);
      if (ms === 0) {
        const isKnown = await known.exists({
          _id: key('known', email, address),
          at: trusted({ $gt: new Date(now() - KNOWN_FOR_MS) }),
        });
        if (!isKnown) ms = await wait(key('account', email), ACCOUNT_FREE_FAILURES, ACCOUNT_MAX_DELAY_MS);
      }
      if (ms > 0) {
        throw new HttpError(429, httpMessages.tooManyRequests, {
          headers: { 'Retry-After': String(Math.ceil(ms / 1000)) },
        });
      }
    },

    async failed(email, address, device) {
      const at = new Date(now());
      await Promise.all([
        count(key('pair', email, address), at),
        count(key('account', email), at),
        ...(device === undefined ? [] : [count(key('device', device), at)]),
      ]);
    },

    async trusts(device) {
      const record = await failures.findById(key('device', device)).lean();
      return (
        !record || now() - record.lastFailureAt.getTime() >= FORGET_AFTER_MS || record.failures < DEVICE_FREE_FAILURES
      );
    },

    async succeeded(email, address) {
      await Promise.all([
        // Set to nothing rather than deleted: a record, once created, stays until the prune, so
        // only its creation can race (upsertRacing: two first failures at once both insert).
        failures.updateOne({ _id: key('pair', email, address) }, { $set: { failures: 0 } }),
        upsertRacing(() =>
          known.updateOne({ _id: key('known', email, address) }, { $set: { at: new Date(now()) } }, { upsert: true }),
        ),
      ]);
    },

    async prune() {
      const [forgotten, unknown] = await Promise.all([
        failures.deleteMany({ lastFailureAt: trusted({ $lt: new Date(now() - FORGET_AFTER_MS) }) }),
        known.deleteMany({ at: trusted({ $lt: new Date(now() - KNOWN_FOR_MS) }) }),
      ]);
      return forgotten.deletedCount + unknown.deletedCount;
    },

    startPruning(onError, intervalMs = 10 * 60_000) {
      const timer = setInterval(() => void throttle.prune().catch(onError), intervalMs);
      timer.unref();
      return () => clearInterval(timer);
    },
  };
  return throttle;
}
