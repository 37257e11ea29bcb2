/**
 * The access tokens that were revoked before they expire, as every verifier holds them: in
 * memory, so that verifying stays free of database reads. Identity keeps the log they come from
 * (a gap-free sequence of entries); each process follows it (revocation-feed.ts) and applies what
 * is new.
 *
 * Two kinds of entry:
 * - a user's not-before, in whole seconds: every token of that user with `iat` before it is
 *   refused ("log out everywhere", a password change or reset, an account deletion). A revocation
 *   at time t sets not-before to the second after t's, so every token issued in t's second or
 *   earlier is refused; identity issues the user's later tokens with `iat` no earlier than it, so
 *   a token issued after the revocation works even within the same second;
 * - one token, by digest (a logout, a session ended one by one), with its user: a token is only
 *   hashed to be looked up when its user has a revoked token, so the tokens of everyone else cost
 *   one map lookup whatever the list holds.
 *
 * An entry is kept until `until`, when every token it refuses has expired anyway.
 */
import { createHash } from 'node:crypto';

export interface Revocation {
  /** The entry's place in identity's log: 1, 2, 3…, with no gap. */
  seq: number;
  /** With `notBefore`: the user whose older tokens are refused; with `digest`: the token's user. */
  userId?: string;
  /** Seconds since the epoch: the user's tokens with `iat` before it are refused. */
  notBefore?: number;
  /** One refused token, by tokenDigest. */
  digest?: string;
  /** Seconds since the epoch: after it, no token this entry refuses is still valid. */
  until: number;
}

/** What the log answers for "after seq": entries in order, and the log's last seq. */
export interface RevocationBatch {
  entries: Revocation[];
  last: number;
}

/** The digest a single revoked token is known by: SHA-256, base64url. */
export function tokenDigest(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

/** Not-before for a revocation at `atMs`: the second after the one it happened in. */
export function notBeforeAt(atMs: number): number {
  return Math.floor(atMs / 1000) + 1;
}

const FORGET_EVERY_MS = 60_000;

export class RevocationList {
  /** User id → its not-before, and until when the entry is kept. */
  private readonly users = new Map<string, { notBefore: number; until: number }>();
  /** User id → its revoked tokens: digest → until when the entry is kept. */
  private readonly digests = new Map<string, Map<string, number>>();
  /** Revoked tokens whose entry names no user (none are written so): digest → until. */
  private readonly anyone = new Map<string, number>();
  private forgottenAt = 0;
  /** The last entry applied. */
  seq = 0;
  /** When the list was last up to date with the log (ms since the epoch); undefined: never yet. */
  currentAt: number | undefined;
  /** Who waits for the list's first time up to date (whenCurrent). */
  private readonly waiting = new Set<() => void>();

  /** Applies a batch of the log; `caughtUp` when it ends at the log's last entry. */
  apply({ entries, last }: RevocationBatch, now = Date.now()): { caughtUp: boolean } {
    for (const entry of entries) {
      if (entry.seq <= this.seq) continue;
      this.add(entry);
      this.seq = entry.seq;
    }
    if (last < this.seq) {
      // The log is shorter than what was read of it: it was started afresh (a new database).
      // Its entries are all that counts now, from the first.
      this.users.clear();
      this.digests.clear();
      this.anyone.clear();
      this.seq = 0;
      return { caughtUp: false };
    }
    if (now - this.forgottenAt > FORGET_EVERY_MS) this.forgetExpired(now);
    const caughtUp = this.seq >= last;
    if (caughtUp) {
      this.currentAt = now;
      for (const wake of this.waiting) wake();
    }
    return { caughtUp };
  }

  /**
   * True once the list has been up to date with the log, at once when it already has; false when
   * it still has not after `withinMs` (no limit when not given).
   */
  whenCurrent(withinMs?: number): Promise<boolean> {
    if (this.currentAt !== undefined) return Promise.resolve(true);
    return new Promise((resolve) => {
      const settle = (current: boolean) => {
        clearTimeout(timer);
        this.waiting.delete(wake);
        resolve(current);
      };
      const wake = () => settle(true);
      const timer = withinMs === undefined ? undefined : setTimeout(() => settle(false), withinMs).unref();
      this.waiting.add(wake);
    });
  }

  /** Whether this token (already verified: its signature and its expiry) was revoked. */
  refuses(token: string, userId: string, issuedAt: number): boolean {
    const user = this.users.get(userId);
    if (user && issuedAt < user.notBefore) return true;
    const revoked = this.digests.get(userId);
    if (!revoked && this.anyone.size === 0) return false;
    const digest = tokenDigest(token);
    return (revoked?.has(digest) ?? false) || this.anyone.has(digest);
  }

  /** Entries held. */
  get size(): number {
    let tokens = this.anyone.size;
    for (const revoked of this.digests.values()) tokens += revoked.size;
    return this.users.size + tokens;
  }

  private add({ userId, notBefore, digest, until }: Revocation): void {
    if (userId !== undefined && notBefore !== undefined) {
      const held = this.users.get(userId);
      if (!held || held.notBefore < notBefore) this.users.set(userId, { notBefore, until });
    }
    if (digest === undefined) return;
    if (userId === undefined) {
      this.anyone.set(digest, until);
      return;
    }
    const revoked = this.digests.get(userId) ?? new Map<string, number>();
    revoked.set(digest, until);
    this.digests.set(userId, revoked);
  }

  private forgetExpired(now: number): void {
    this.forgottenAt = now;
    const nowS = now / 1000;
    for (const [userId, { until }] of this.users) if (until < nowS) this.users.delete(userId);
    for (const [digest, until] of this.anyone) if (until < nowS) this.anyone.delete(digest);
    for (const [userId, revoked] of this.digests) {
      for (const [digest, until] of revoked) if (until < nowS) revoked.delete(digest);
      if (revoked.size === 0) this.digests.delete(userId);
    }
  }
}
