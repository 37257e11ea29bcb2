/**
 * What a reservation of an account's upload budget (upload-budget.ts) still holds: the bytes of
 * objects under its keys that no note has attached, or that links still valid may yet put. Judged
 * by the records and storage as they are now, and only ever from held to settled: a key attached,
 * removed or never put stays so (a link still valid at a release can put an object back; the purge
 * deletes it within RELEASED_RETENTION of the link's expiry, see uploads.ts).
 *
 * - links (with size, a block of keys; without, one key): while a link may still put (its expiry
 *   and the check delay), everything reserved. Then storage is looked at once, under each key: what
 *   it holds is kept on the lap (`found`) and held until a record says it was attached or removed,
 *   or until the sweeper's time for it (an unclaimed object: the claim TTL and its margin after the
 *   put; a size-less link's record: the claim TTL after its issue). A size-less link's object
 *   counts as UPLOAD_MAX_BYTES, as at its issue (the check deletes what is larger);
 * - a multipart upload: everything, while its record is issued (parts still coming, or completed
 *   and not attached), until it is attached, aborted or swept;
 * - a record never written (the issue failed after the reservation) or already purged: settled
 *   once RECORD_GRACE_MS has passed.
 */
import { trusted } from '@cs/mongo';
import type { ObjectStorage } from '@cs/storage';
import type { BudgetLap, FoundObject, UploadModel, UploadRecord } from './model';
import type { Held, SettleCheck } from './upload-budget';

/** A reservation's record is written in the same request, right after it: at most this later. */
const RECORD_GRACE_MS = 60_000;
/** Storage listings at once while recounting an account. */
const LOOKS_AT_ONCE = 8;

type RecordState = Pick<UploadRecord, 'key' | 'state' | 'issuedAt' | 'lockedUntil'>;

export function createReservationCheck({
  model,
  storage,
  claimTtlMs,
  sweepMarginMs,
  checkDelayMs,
}: {
  model: UploadModel;
  storage: ObjectStorage;
  claimTtlMs: number;
  sweepMarginMs: number;
  checkDelayMs: number;
}): SettleCheck {
  /** What storage holds under each of the lap's keys (a full key, or a block's key prefix). */
  async function look(lap: BudgetLap): Promise<FoundObject[]> {
    const found: FoundObject[] = [];
    for (const prefix of lap.keys) {
      const { objects } = await storage.listObjects(prefix, { max: 10 });
      for (const o of objects) {
        found.push({
          key: o.key,
          size: o.size,
          until: new Date(o.lastModified.getTime() + claimTtlMs + sweepMarginMs),
        });
      }
    }
    return found;
  }

  return async (laps) => {
    const held = new Map<string, Held>();
    const found = new Map<string, FoundObject[]>();
    if (laps.length === 0) return { held, found };
    const now = Date.now();
    const linkOpen = (lap: BudgetLap) => (lap.linkExpiresAt?.getTime() ?? 0) + checkDelayMs > now;

    // Laps whose links have all expired are looked at in storage once.
    const toLook = laps.filter((l) => l.kind !== 'multipart' && !l.looked && !linkOpen(l));
    for (let i = 0; i < toLook.length; i += LOOKS_AT_ONCE) {
      await Promise.all(toLook.slice(i, i + LOOKS_AT_ONCE).map(async (l) => found.set(l._id, await look(l))));
    }
    const objectsOf = (l: BudgetLap) => found.get(l._id) ?? l.found ?? [];

    const keys = laps.flatMap((l) => (l.kind === 'sized' ? objectsOf(l).map((o) => o.key) : l.keys));
    const records = await model
      .find({ key: trusted({ $in: keys }) }, 'key state issuedAt lockedUntil')
      .lean<RecordState[]>();
    const byKey = new Map(records.map((r) => [r.key, r]));
    /** When a record says its key holds nothing unattached: undefined; else when it may settle. */
    const recordHolds = (record: RecordState, otherwise: number): number | undefined => {
      if (record.state === 'attached' || record.state === 'released') return undefined;
      if (record.state === 'releasing') return record.lockedUntil.getTime();
      return otherwise;
    };

    for (const lap of laps) {
      const until = (lap.linkExpiresAt?.getTime() ?? 0) + checkDelayMs;
      if (lap.kind === 'multipart') {
        const [key = ''] = lap.keys;
        const record = byKey.get(key);
        const holds = record
          ? recordHolds(record, record.issuedAt.getTime() + claimTtlMs)
          : lap.at.getTime() + RECORD_GRACE_MS > now
            ? lap.at.getTime() + RECORD_GRACE_MS
            : undefined;
        if (holds !== undefined) held.set(lap._id, { bytes: lap.bytes, count: 1, until: holds });
        continue;
      }
      if (linkOpen(lap)) {
        held.set(lap._id, { bytes: lap.bytes, count: lap.keys.length, until });
        continue;
      }
      let bytes = 0;
      let count = 0;
      let soonest = Number.POSITIVE_INFINITY;
      for (const object of objectsOf(lap)) {
        const record = byKey.get(object.key);
        const sweptAt = object.until.getTime();
        const holds =
          lap.kind === 'sizeless'
            ? record && recordHolds(record, record.issuedAt.getTime() + claimTtlMs)
            : record
              ? recordHolds(record, sweptAt)
              : sweptAt > now
                ? sweptAt
                : undefined;
        if (holds === undefined) continue;
        bytes += lap.kind === 'sizeless' ? lap.bytes : object.size;
        count += 1;
        soonest = Math.min(soonest, holds);
      }
      if (count > 0) held.set(lap._id, { bytes: Math.min(bytes, lap.bytes), count, until: soonest });
    }
    return { held, found };
  };
}
