/**
 * What one account may hold not yet attached to a note: at most `maxCount` uploads and `maxBytes`.
 * Issuing a link with size writes nothing (a signature), so the bound is not kept at issue, where
 * it would cost a database write per link: it is kept on what is stored, by the sweeper.
 *
 * - Every upload not yet attached has a record in state `issued`: a size-less link's and a
 *   multipart upload's from their issue, and an object put through a link with size from the
 *   sweeper's first listing that sees it (sweeper.ts `sweepUnclaimed` adopts it, reading the owner
 *   the link signed into it). A record counts its size: an object's own, a multipart upload's
 *   declared one, and `sizelessBytes` (the upload limit) for a size-less link.
 * - At every pass the sweeper measures each account (`measure`) and, for an account over a bound,
 *   releases its oldest records until it is within both (`excessOf`). Each release is the record's
 *   next version, taken as a turn, so a claim racing it either attaches the key first (and the
 *   account holds less) or finds it released: exactly one wins. Replicas that enforce at once read
 *   the same records and pick the same oldest ones, so together they release no more than the
 *   excess.
 * - Issuing (`refuse`) asks only what this replica measured at its last pass, in memory: an
 *   account already at a bound is told 429 at once, with `Retry-After` the seconds until the next
 *   measure, the first moment its attaching or aborting something can change the answer. Costs a
 *   map lookup. It is a courtesy: the bound is the sweeper's.
 */
import { HttpError } from '@cs/errors';
import { messages } from '../messages';
import type { UploadModel, UploadRecord } from '../uploads/model';

export interface UnclaimedLimits {
  maxCount: number;
  maxBytes: number;
  /** What a size-less link counts: its object may be anything up to the upload limit. */
  sizelessBytes: number;
  /** How often the sweeper measures again. */
  everyMs: number;
}

interface Held {
  count: number;
  bytes: number;
}

export function createUnclaimedBudget({ model, limits }: { model: UploadModel; limits: UnclaimedLimits }) {
  const bytesOf = (record: Pick<UploadRecord, 'size'>) => record.size ?? limits.sizelessBytes;
  const over = ({ count, bytes }: Held) => count > limits.maxCount || bytes > limits.maxBytes;
  /** Each account's holdings at this replica's last measure (only accounts holding anything). */
  let held = new Map<string, Held>();
  let nextMeasureAt = 0;

  return {
    /** 429 when the account, as last measured, cannot take `bytes` more in one more upload. */
    refuse(ownerId: string, bytes: number): void {
      const mine = held.get(ownerId);
      if (!mine || !over({ count: mine.count + 1, bytes: mine.bytes + bytes })) return;
      const retryAfterS = Math.max(1, Math.ceil((nextMeasureAt - Date.now()) / 1000));
      throw new HttpError(429, messages.tooMuchUnclaimed(limits.maxCount, limits.maxBytes), {
        headers: { 'Retry-After': String(retryAfterS) },
      });
    },

    /** Every account's uploads not yet attached, read once; the accounts over a bound. */
    async measure(): Promise<string[]> {
      const measured = new Map<string, Held>();
      const cursor = model.find({ state: 'issued' }, 'ownerId size').lean<UploadRecord[]>().cursor();
      for await (const record of cursor) {
        const mine = measured.get(record.ownerId) ?? { count: 0, bytes: 0 };
        mine.count += 1;
        mine.bytes += bytesOf(record);
        measured.set(record.ownerId, mine);
      }
      held = measured;
      nextMeasureAt = Date.now() + limits.everyMs;
      return [...measured].filter(([, mine]) => over(mine)).map(([ownerId]) => ownerId);
    },

    /**
     * The account's uploads not yet attached that must go for it to be within both bounds: the
     * oldest ones. What the account then holds is what this replica answers issues with.
     */
    async excessOf(ownerId: string): Promise<UploadRecord[]> {
      const records = await model.find({ ownerId, state: 'issued' }).sort({ issuedAt: 1 }).lean<UploadRecord[]>();
      const mine = { count: records.length, bytes: records.reduce((sum, r) => sum + bytesOf(r), 0) };
      const excess: UploadRecord[] = [];
      for (const record of records) {
        if (!over(mine)) break;
        excess.push(record);
        mine.count -= 1;
        mine.bytes -= bytesOf(record);
      }
      held.set(ownerId, mine);
      return excess;
    },
  };
}

export type UnclaimedBudget = ReturnType<typeof createUnclaimedBudget>;
