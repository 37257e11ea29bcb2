/**
 * A bound on what a caller holds open: size-less links, and multipart uploads (each its own
 * collection of slots). A caller holds at most `maxOpen` unexpired ones at once, however
 * many requests race, on FerretDB as on MongoDB. A count followed by an insert would not hold
 * there, and neither would deleting an expired holder before inserting a new one (FerretDB reads,
 * then deletes by `_id`: a racer's fresh holder can be deleted in between). So nothing is ever
 * deleted while it could matter, and every decision is an insert under `_id`'s unique index:
 *
 * - each of a caller's slots 0…maxOpen-1 is held by a sequence of laps, `<ownerId>#<slot>.<lap>`;
 * - lap L+1 is inserted only by a taker that read lap L and saw it expired, so while lap L is
 *   unexpired no lap after it can exist, and racers for one lap meet the unique index: one wins;
 * - lap 0 is inserted only by a taker that saw no lap of that slot at all;
 * - superseded laps are deleted once a newer one exists (`forget`), never the newest of a slot, so
 *   a taker's view of "the newest lap" only ever moves forward;
 * - a holder done before its time (a multipart upload completed or aborted) frees its lap by
 *   moving its expiry to now (`free`): only that holder writes it, and an expired lap is what lets
 *   the next one be taken, so the rules above still hold.
 */
import { randomInt } from 'node:crypto';
import { HttpError } from '@cs/errors';
import { claimedByInsert, trusted } from '@cs/mongo';
import { messages } from '../messages';
import type { LinkSlot, LinkSlotModel } from './model';

export function createLinkSlots({
  slots,
  maxOpen,
  tooMany = messages.tooManyOpenLinks,
}: {
  slots: LinkSlotModel;
  maxOpen: number;
  /** The 429's message, given the bound. */
  tooMany?: (maxOpen: number) => string;
}) {
  /** Takes lap `lap` of `slot`: false when a racer took it first. */
  const insert = (ownerId: string, slot: number, lap: number, key: string, expiresAt: Date): Promise<boolean> =>
    claimedByInsert(() => slots.create({ _id: `${ownerId}#${slot}.${lap}`, ownerId, slot, lap, key, expiresAt }));

  /**
   * Deletes laps that a newer lap of their slot supersedes (seen in the same read, or just
   * inserted), so the read stays short: at most a slot's newest lap each, and what a failed
   * delete left, which the next take cleans. In the background: the caller does not wait for it.
   * Never the newest lap of a slot, so every taker reads the same newest laps with or without them.
   */
  function forget(superseded: Array<Pick<LinkSlot, 'slot' | 'lap'>>, ownerId: string): void {
    if (superseded.length === 0) return;
    const ids = superseded.map(({ slot, lap }) => `${ownerId}#${slot}.${lap}`);
    slots.deleteMany({ _id: trusted({ $in: ids }) }).catch(() => undefined);
  }

  return {
    /**
     * A slot for `key` until `expiresAt`; 429 with `Retry-After` (when the first held slot
     * expires) when every slot is held.
     */
    async take(ownerId: string, key: string, expiresAt: Date): Promise<void> {
      const held = await slots.find({ ownerId }, 'slot lap expiresAt').lean<LinkSlot[]>();
      const now = Date.now();
      const newest = new Map<number, LinkSlot>();
      for (const lap of held) {
        if (lap.slot < maxOpen && lap.lap >= (newest.get(lap.slot)?.lap ?? -1)) newest.set(lap.slot, lap);
      }
      // Free slots in an order of their own per request, so that racers mostly try different ones.
      const free: Array<{ slot: number; lap: number }> = [];
      for (let slot = 0; slot < maxOpen; slot++) {
        const last = newest.get(slot);
        if (!last) free.push({ slot, lap: 0 });
        else if (last.expiresAt.getTime() <= now) free.push({ slot, lap: last.lap + 1 });
      }
      const start = free.length > 0 ? randomInt(free.length) : 0;
      for (let i = 0; i < free.length; i++) {
        const { slot, lap } = free[(start + i) % free.length] as { slot: number; lap: number };
        if (await insert(ownerId, slot, lap, key, expiresAt)) {
          const superseded = held.filter((l) => l.lap < (newest.get(l.slot)?.lap ?? -1));
          forget(lap > 0 ? [...superseded, { slot, lap: lap - 1 }] : superseded, ownerId);
          return;
        }
      }
      const soonest = Math.min(...[...newest.values()].map((lap) => lap.expiresAt.getTime()));
      const retryAfterS = Math.max(1, Math.ceil((soonest - now) / 1000));
      throw new HttpError(429, tooMany(maxOpen), {
        headers: { 'Retry-After': String(Number.isFinite(retryAfterS) ? retryAfterS : 1) },
      });
    },

    /** `key` is done with its slot before the slot's time: the slot may be taken again from now. */
    async free(ownerId: string, key: string): Promise<void> {
      await slots.updateMany(
        { ownerId, key, expiresAt: trusted({ $gt: new Date() }) },
        { $set: { expiresAt: new Date() } },
      );
    },

    /** A deleted account's slots. */
    async removeAllOf(ownerId: string): Promise<void> {
      await slots.deleteMany({ ownerId });
    },
  };
}

export type LinkSlots = ReturnType<typeof createLinkSlots>;
