/**
 * Links with size come out of blocks, so that issuing one stays a signature and no database write.
 * A block is one reservation of the account's budget (upload-budget.ts) for a few keys and their
 * bytes; the replica that took it hands its keys out for a short window, each link's size counted off
 * the block's bytes (blockWindowMs). The keys are fixed when the block is taken (`uploads/<uuid>.`, the extension
 * added at hand-out), so what its links put can be found under them, whichever replica or process
 * handed them out, or none (reservations.ts).
 *
 * A block is as large as the account's recent pace asks: one key after a quiet window, twice the
 * last block's keys when that one ran out within its window (up to MAX_KEYS, and a slot's share).
 * What a block did not hand out holds its share until its links could have expired, as a link
 * never used does: the bound is on what was reserved, never more than what was asked for by more
 * than a block's growth.
 */
import { randomUUID } from 'node:crypto';
import { HttpError } from '@cs/errors';
import type { UploadBudget } from './upload-budget';

/**
 * How long a replica hands out a block's keys: 10 s, or a tenth of a link's life if that is
 * shorter, so a block holds what it did not hand out at most 10% longer than a link would.
 */
export function blockWindowMs(uploadTtlS: number): number {
  return Math.min(10_000, uploadTtlS * 100);
}
/** The most keys one block reserves. */
const MAX_KEYS = 64;
/** Accounts whose block a replica keeps, the least recently used going first. */
const BLOCKS_KEPT = 10_000;

interface Block {
  prefixes: string[];
  bytesLeft: number;
  /** How many keys it reserved. */
  size: number;
  windowEnd: number;
}

export function createLinkBlocks({ budget, uploadTtlS }: { budget: UploadBudget; uploadTtlS: number }) {
  const windowMs = blockWindowMs(uploadTtlS);
  const blocks = new Map<string, Block>();
  /** A block being taken for an account: its other requests wait for it rather than take their own. */
  const taking = new Map<string, Promise<unknown>>();

  function from(block: Block | undefined, size: number): string | undefined {
    if (!block || Date.now() >= block.windowEnd || block.bytesLeft < size) return undefined;
    const prefix = block.prefixes.pop();
    if (prefix !== undefined) block.bytesLeft -= size;
    return prefix;
  }

  /** Takes a new block for the account, and returns its first key's prefix: the caller's own. */
  async function takeBlock(ownerId: string, size: number): Promise<string> {
    const last = blocks.get(ownerId);
    const ranOut = last && Date.now() < last.windowEnd + windowMs;
    const wanted = ranOut ? Math.min(2 * last.size, MAX_KEYS) : 1;
    const keys = Math.max(1, Math.min(wanted, Math.floor(budget.slotBytes / size), budget.slotCount));
    const windowEnd = Date.now() + windowMs;
    const linkExpiresAt = new Date(windowEnd + uploadTtlS * 1000);
    const reserve = async (n: number) => {
      const prefixes = Array.from({ length: n }, () => `uploads/${randomUUID()}.`);
      await budget.take(ownerId, { keys: prefixes, kind: 'sized', bytes: n * size, linkExpiresAt });
      const first = prefixes.pop() as string;
      blocks.delete(ownerId);
      blocks.set(ownerId, { prefixes, bytesLeft: (n - 1) * size, size: n, windowEnd });
      if (blocks.size > BLOCKS_KEPT) blocks.delete(blocks.keys().next().value as string);
      return first;
    };
    try {
      return await reserve(keys);
    } catch (err) {
      // No room for a block that large: room for this one link may still be there.
      if (keys === 1 || !(err instanceof HttpError) || err.status !== 429) throw err;
      return await reserve(1);
    }
  }

  return {
    /** A key for a link of `size` bytes, with the extension, from the account's block. */
    async key(ownerId: string, size: number, extension: string): Promise<string> {
      for (;;) {
        const prefix = from(blocks.get(ownerId), size);
        if (prefix !== undefined) return `${prefix}${extension}`;
        const pending = taking.get(ownerId);
        if (!pending) {
          const mine = takeBlock(ownerId, size).finally(() => taking.delete(ownerId));
          taking.set(ownerId, mine);
          return `${await mine}${extension}`;
        }
        // Another request's block: what it leaves may be used up by the time this one looks.
        await pending.catch(() => undefined);
      }
    },

    /** A deleted account's block. */
    forget(ownerId: string): void {
      blocks.delete(ownerId);
    },
  };
}

export type LinkBlocks = ReturnType<typeof createLinkBlocks>;
