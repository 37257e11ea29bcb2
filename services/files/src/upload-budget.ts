/**
 * What one account may hold in storage before it is attached: at most `maxBytes` in at most
 * `maxCount` reservations at once, however many requests race, on FerretDB as on MongoDB. A sum
 * followed by an insert would not hold there (two racers both see room), so, as in link-slots.ts,
 * every decision is an insert under `_id`'s unique index:
 *
 * - the budget is cut into `slots` slots, each a share of the bytes and of the keys;
 * - a slot is a chain of laps `<family>:<ownerId>#<slot>.<lap>`, one reservation each (a key, or a
 *   block of keys: link-blocks.ts), and a lap carries what its slot holds with it (`total`, `count`). Lap L+1 is inserted only by a taker
 *   that read lap L as the slot's newest and saw room beside it: racers for a lap meet the unique
 *   index and one wins, so a slot never holds more than its share;
 * - a reservation holds its bytes until it settles (attached, removed, or its link expired with
 *   nothing put: see reservations.ts). That is looked at only when no slot has room: a recount of
 *   the account's laps, whose totals the next lap of each slot carries on;
 * - a replica keeps the newest laps it read or wrote for a few seconds, so a take is usually one
 *   insert: a lap written meanwhile by another replica makes that insert collide, and it reads again;
 * - laps that settled are deleted once no taker can still act on a read of them (FORGET_AFTER_MS),
 *   but never the newest lap of a slot, which the next lap's number comes from.
 */
import { randomInt } from 'node:crypto';
import type { HttpError } from '@cs/errors';
import { isDuplicateKey, sleep, trusted } from '@cs/mongo';
import type { BudgetLap, BudgetLapModel, FoundObject, ReservationKind } from './model';

export interface Reservation {
  /** Full keys, or key prefixes for a block of links with size. */
  keys: string[];
  kind: ReservationKind;
  bytes: number;
  /** When the last link for its keys expires; null for a multipart upload. */
  linkExpiresAt: Date | null;
}

/** What a lap still holds, and the earliest time that may change. */
export interface Held {
  bytes: number;
  count: number;
  until: number;
}

/**
 * What each of these laps still holds (a lap left out has settled), and for laps whose links have
 * expired, what storage held under their keys: kept on the lap, so storage is asked once.
 */
export type SettleCheck = (
  laps: BudgetLap[],
) => Promise<{ held: Map<string, Held>; found: Map<string, FoundObject[]> }>;

/** A replica's view of a slot: its newest lap, and what the slot holds with it. */
interface SlotHead {
  lap: number;
  total: number;
  count: number;
}

interface View {
  readAt: number;
  /** Until when this replica acts on it without reading again. */
  until: number;
  heads: SlotHead[];
  /** Settled laps are left out of the totals (a recount); when no slot has room, the earliest time one may. */
  recounted: boolean;
  soonest: number;
}

/** How long a replica acts on the laps it read or wrote before it reads them again. */
const VIEW_MS = 5_000;
/**
 * How long a replica answers 429 from a recount that found no room, before it recounts again: so
 * an account that keeps asking past its bound costs a recount a second, not one a request. Room
 * made meanwhile (an attach, an abort) is seen within that second.
 */
const REFUSAL_MS = 1_000;
/** Accounts whose view a replica keeps, the least recently used going first. */
const VIEWS_KEPT = 10_000;
/** How many times a take reads again after other takers won every lap it tried. */
const TRIES = 8;
/** A settled lap is deleted this long after it was taken: long past any taker's read of it. */
export const FORGET_AFTER_MS = 10 * 60_000;

export interface UploadBudget {
  /** Takes room for `reservation`, or throws 429 with `Retry-After` (503 when racers kept every lap). */
  take(ownerId: string, reservation: Reservation): Promise<void>;
  /** Laps older than the age at which every reservation has settled; the newest of each slot stays. */
  prune(limit?: number): Promise<number>;
  /** A deleted account's laps. */
  removeAllOf(ownerId: string): Promise<void>;
  /** The largest single reservation that fits: a slot's share of the bytes and of the keys. */
  readonly slotBytes: number;
  readonly slotCount: number;
}

export function createUploadBudget({
  laps,
  family,
  slots,
  maxBytes,
  maxCount,
  settledAfterMs,
  settle,
  refused,
  busy,
}: {
  laps: BudgetLapModel;
  /** Which budget this is: its laps are apart from another family's. */
  family: string;
  slots: number;
  maxBytes: number;
  maxCount: number;
  /** A reservation taken this long ago has settled, whatever it was (its object has been swept). */
  settledAfterMs: number;
  settle: SettleCheck;
  /** The 429's error, with the seconds until a reservation may settle. */
  refused: (retryAfterS: number) => HttpError;
  busy: () => HttpError;
}): UploadBudget {
  const slotBytes = Math.floor(maxBytes / slots);
  const slotCount = Math.floor(maxCount / slots);
  if (slotCount < 1 || slotBytes < 1) throw new Error(`${family} budget: fewer reservations or bytes than slots`);
  const views = new Map<string, View>();

  const idOf = (ownerId: string, slot: number, lap: number) => `${family}:${ownerId}#${slot}.${lap}`;

  function keep(ownerId: string, view: View): void {
    views.delete(ownerId);
    views.set(ownerId, view);
    if (views.size > VIEWS_KEPT) views.delete(views.keys().next().value as string);
  }

  /** The replica's view of the account, if recent: a copy, so that requests under way never see it change. */
  function fresh(ownerId: string): View | undefined {
    const view = views.get(ownerId);
    if (view && Date.now() < view.until) return { ...view, heads: view.heads.map((h) => ({ ...h })) };
    views.delete(ownerId);
    return undefined;
  }

  /** After this request wrote `head` as the newest lap of `slot`: the kept view says so too. */
  function wrote(ownerId: string, view: View, slot: number, head: SlotHead): void {
    const kept = views.get(ownerId);
    if (kept && Date.now() < kept.until) {
      if ((kept.heads[slot]?.lap ?? -1) < head.lap) kept.heads[slot] = head;
      return;
    }
    view.heads[slot] = head;
    keep(ownerId, view);
  }

  /** Deletes, in the background, laps that settled long enough ago; never a slot's newest. */
  function forget(all: BudgetLap[], heads: SlotHead[], settled: ReadonlySet<string>, now: number): void {
    const ids = all
      .filter((l) => heads[l.slot]?.lap !== l.lap && now - l.at.getTime() > FORGET_AFTER_MS)
      .filter((l) => l.resolved || settled.has(l._id) || now - l.at.getTime() > settledAfterMs)
      .map((l) => l._id);
    if (ids.length > 0) laps.deleteMany({ _id: trusted({ $in: ids }) }).catch(() => undefined);
  }

  /** The account's laps as stored: each slot's newest lap and what it says the slot holds. */
  async function read(ownerId: string): Promise<{ all: BudgetLap[]; view: View }> {
    const readAt = Date.now();
    const all = await laps.find({ ownerId, family }).lean<BudgetLap[]>();
    const heads: SlotHead[] = Array.from({ length: slots }, () => ({ lap: -1, total: 0, count: 0 }));
    for (const l of all) {
      const head = heads[l.slot];
      if (head && l.lap > head.lap) heads[l.slot] = { lap: l.lap, total: l.total, count: l.count };
    }
    forget(all, heads, new Set(), readAt);
    return {
      all,
      view: { readAt, until: readAt + VIEW_MS, heads, recounted: false, soonest: Number.POSITIVE_INFINITY },
    };
  }

  /** What each slot holds once the settled reservations are left out. */
  async function recount(all: BudgetLap[], { readAt, until, heads }: View): Promise<View> {
    const open = all.filter((l) => l.slot < slots && !l.resolved && readAt - l.at.getTime() <= settledAfterMs);
    const { held: holds, found } = await settle(open);
    for (const [id, objects] of found) {
      laps.updateOne({ _id: id }, { $set: { looked: true, found: objects } }).catch(() => undefined);
    }
    const counted = heads.map((head) => ({ ...head, total: 0, count: 0 }));
    const settled = new Set<string>();
    let soonest = Number.POSITIVE_INFINITY;
    for (const l of open) {
      const still = holds.get(l._id);
      const head = counted[l.slot] as SlotHead;
      if (still === undefined) {
        settled.add(l._id);
        continue;
      }
      head.total += still.bytes;
      head.count += still.count;
      soonest = Math.min(soonest, still.until);
    }
    if (settled.size > 0) {
      laps.updateMany({ _id: trusted({ $in: [...settled] }) }, { $set: { resolved: true } }).catch(() => undefined);
    }
    forget(all, heads, settled, Date.now());
    return { readAt, until, heads: counted, recounted: true, soonest };
  }

  /** Slots with room for `r`, in an order of this request's own, so racers mostly differ. */
  function roomFor(view: View, r: Reservation): number[] {
    const room: number[] = [];
    view.heads.forEach((head, slot) => {
      if (head.total + r.bytes <= slotBytes && head.count + r.keys.length <= slotCount) room.push(slot);
    });
    const start = room.length > 0 ? randomInt(room.length) : 0;
    return room.map((_, i) => room[(start + i) % room.length] as number);
  }

  async function insert(ownerId: string, slot: number, head: SlotHead, r: Reservation): Promise<boolean> {
    try {
      await laps.create({
        _id: idOf(ownerId, slot, head.lap + 1),
        family,
        ownerId,
        slot,
        lap: head.lap + 1,
        keys: r.keys,
        kind: r.kind,
        bytes: r.bytes,
        total: head.total + r.bytes,
        count: head.count + r.keys.length,
        linkExpiresAt: r.linkExpiresAt,
        at: new Date(),
      });
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  return {
    slotBytes,
    slotCount,

    async take(ownerId, reservation) {
      if (reservation.bytes > slotBytes || reservation.keys.length > slotCount) {
        throw new Error(`${family} budget: a reservation larger than a slot`);
      }
      for (let attempt = 1; attempt <= TRIES; attempt++) {
        let view = fresh(ownerId);
        let all: BudgetLap[] | undefined;
        if (!view) ({ all, view } = await read(ownerId));
        let room = roomFor(view, reservation);
        if (room.length === 0 && !view.recounted) {
          if (!all) ({ all, view } = await read(ownerId));
          view = await recount(all, view);
          room = roomFor(view, reservation);
        }
        if (room.length === 0) {
          keep(ownerId, { ...view, until: Math.min(Date.now() + REFUSAL_MS, view.soonest) });
          const retryAfterS = Math.max(1, Math.ceil((view.soonest - Date.now()) / 1000));
          throw refused(Number.isFinite(retryAfterS) ? retryAfterS : 1);
        }
        for (const slot of room) {
          const head = view.heads[slot] as SlotHead;
          if (await insert(ownerId, slot, head, reservation)) {
            const count = head.count + reservation.keys.length;
            const next = { lap: head.lap + 1, total: head.total + reservation.bytes, count };
            wrote(ownerId, view, slot, next);
            return;
          }
        }
        // Other takers wrote the laps this view knew as newest: read them.
        views.delete(ownerId);
        await sleep(Math.min(10 * 2 ** attempt, 200) * (0.5 + Math.random()));
      }
      throw busy();
    },

    async prune(limit = 1000) {
      const cutoff = new Date(Date.now() - settledAfterMs);
      const old = await laps
        .find({ family, at: trusted({ $lt: cutoff }), idle: trusted({ $ne: true }) }, 'ownerId')
        .limit(limit)
        .lean<Pick<BudgetLap, '_id' | 'ownerId'>[]>();
      if (old.length === 0) return 0;
      const owners = [...new Set(old.map((l) => l.ownerId))];
      const theirs = await laps
        .find({ family, ownerId: trusted({ $in: owners }) }, 'ownerId slot lap at')
        .lean<Pick<BudgetLap, '_id' | 'ownerId' | 'slot' | 'lap' | 'at'>[]>();
      const newest = new Map<string, number>();
      for (const l of theirs) {
        const slot = `${l.ownerId}#${l.slot}`;
        newest.set(slot, Math.max(newest.get(slot) ?? -1, l.lap));
      }
      const stale = theirs.filter((l) => l.at < cutoff);
      const isNewest = (l: (typeof stale)[number]) => newest.get(`${l.ownerId}#${l.slot}`) === l.lap;
      const gone = stale.filter((l) => !isNewest(l)).map((l) => l._id);
      const kept = stale.filter(isNewest).map((l) => l._id);
      if (gone.length > 0) await laps.deleteMany({ _id: trusted({ $in: gone }) });
      if (kept.length > 0) await laps.updateMany({ _id: trusted({ $in: kept }) }, { $set: { idle: true } });
      return gone.length;
    },

    async removeAllOf(ownerId) {
      views.delete(ownerId);
      await laps.deleteMany({ ownerId, family });
    },
  };
}
