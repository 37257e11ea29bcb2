/**
 * Keeps a process's revocation list up to date: asks identity's log for what came after the last
 * entry it applied, every second, until stopped. From another process the log is read through
 * identity's `GET /internal/revocations?after=<seq>` (revocationsFrom); identity reads its own.
 *
 * One mechanism whether or not Redis is configured: a pushed message can be missed, so a reader
 * needs this catch-up read anyway, and at one small request a second per process it is also fast
 * enough: a revocation reaches every process within about a second (FOLLOW_EVERY_MS, plus the
 * read). With REDIS_URL or without, the bound is the same.
 */
import type { Logger } from '@cs/log';
import { type Fetch, sampledGauge } from '@cs/telemetry';
import { type RevocationBatch, RevocationList } from './revocations';
import { createTokenVerifier, type TokenVerifier } from './verifier';

export const FOLLOW_EVERY_MS = 1_000;
/** Until its first full read, a process cannot verify tokens (503): it asks again sooner. */
const FIRST_READ_EVERY_MS = 100;
const READ_TIMEOUT_MS = 2_000;

export type RevocationSource = (after: number) => Promise<RevocationBatch>;

const followed = new Set<RevocationList>();

sampledGauge(
  'token_revocations_age_seconds',
  'Seconds since this process last had every revocation of the log (-1: never yet). Past 5, revoked access tokens may pass.',
  [],
  (set) => {
    const now = Date.now();
    for (const list of followed) set({}, list.currentAt === undefined ? -1 : (now - list.currentAt) / 1000);
  },
);
sampledGauge('token_revocations_entries', 'Revocations held in memory (users and single tokens).', [], (set) => {
  for (const list of followed) set({}, list.size);
});

/** Follows `source` into `list` until the returned stop() is called. */
export function followRevocations(
  list: RevocationList,
  source: RevocationSource,
  { logger, everyMs = FOLLOW_EVERY_MS }: { logger: Logger; everyMs?: number },
): { stop(): void; caughtUp(): Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let failing = 0;
  followed.add(list);

  const readAll = async () => {
    // A list far behind (a new process, 10,000 entries) catches up in several reads.
    for (let reads = 0; reads < 100 && !stopped; reads++) {
      if (list.apply(await source(list.seq)).caughtUp) return;
    }
  };

  const round = async () => {
    try {
      await readAll();
      if (failing > 0) logger.info({ failedReads: failing }, 'revocations: the feed answers again');
      failing = 0;
    } catch (err) {
      failing += 1;
      // The first failure, then one in sixty: a down feed is logged, not flooded.
      if (failing % 60 === 1)
        logger.warn({ err: String(err), failedReads: failing }, 'revocations: the feed does not answer');
    }
    if (!stopped) {
      timer = setTimeout(round, list.currentAt === undefined ? Math.min(everyMs, FIRST_READ_EVERY_MS) : everyMs);
      timer.unref();
    }
  };
  void round();

  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      followed.delete(list);
    },
    caughtUp: async () => {
      await list.whenCurrent();
    },
  };
}

/** Identity's log, through HTTP from another process (or another part of this one), by `fetch`. */
export function revocationsFrom(identityUrl: string, fetch: Fetch): RevocationSource {
  const base = identityUrl.replace(/\/+$/, '');
  return async (after) => {
    const res = await fetch(`${base}/internal/revocations?after=${after}`, {
      signal: AbortSignal.timeout(READ_TIMEOUT_MS),
    });
    if (!res.ok) {
      await res.arrayBuffer();
      throw new Error(`identity answered ${res.status} for the revocation log`);
    }
    const batch = (await res.json()) as RevocationBatch;
    if (!Array.isArray(batch?.entries) || typeof batch.last !== 'number') {
      throw new Error('identity answered a revocation log of the wrong shape');
    }
    return batch;
  };
}

/** Where a part that is not identity finds its verifier. */
export interface VerifierSource {
  /** The process's one verifier, when it holds one for all its parts (the one-process mode). */
  shared?: TokenVerifier;
  identityUrl: string;
  secret: string;
  logger: Logger;
  /** How identity's log is read: over the network, or in memory when identity is in this process. */
  fetch: Fetch;
}

/**
 * The verifier of a process that is not identity: a revocation list that follows identity's log
 * from `identityUrl`. Stop it on shutdown.
 */
export function verifierFollowing({ identityUrl, secret, logger, fetch }: VerifierSource): {
  verifier: TokenVerifier;
  stop(): void;
  caughtUp(): Promise<void>;
} {
  const list = new RevocationList();
  const feed = followRevocations(list, revocationsFrom(identityUrl, fetch), { logger });
  return { verifier: createTokenVerifier(secret, list), stop: feed.stop, caughtUp: feed.caughtUp };
}

/**
 * The verifier of one part of a process that is not identity: `shared`, when the process holds one
 * for all its parts (the one-process mode: one list, one follower of the log, stopped by the
 * process), or else one of the part's own, following identity's log. Stop it on shutdown (a shared
 * one is left to its holder).
 */
export function verifierOf(source: VerifierSource): { verifier: TokenVerifier; stop(): void } {
  if (source.shared) return { verifier: source.shared, stop: () => {} };
  return verifierFollowing(source);
}
