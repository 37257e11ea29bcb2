import type { Model } from 'mongoose';

/**
 * An outbox's backlog: how many entries wait, and since when the oldest has (its `createdAt`).
 * What `@cs/telemetry`'s `watchOutbox` reads at scrape time.
 */
export async function backlogOf<T extends { createdAt: Date }>(
  outbox: Model<T>,
): Promise<{ entries: number; oldest?: Date }> {
  const [entries, oldest] = await Promise.all([
    outbox.countDocuments(),
    outbox.findOne().sort({ createdAt: 1 }).select('createdAt').lean<{ createdAt: Date }>(),
  ]);
  return { entries, oldest: oldest?.createdAt };
}
