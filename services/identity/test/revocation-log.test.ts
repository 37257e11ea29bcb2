/**
 * The revocation log on the real database: read by number, pruned as a prefix, read whole by a
 * reader that is behind what is kept or whose log started again.
 */
import { RevocationList } from '@cs/auth';
import { modelOf } from '@cs/mongo';
import { openTestDatabase, type TestDatabase } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { revocationModel } from '../src/revocations/model';
import { createRevocationLog, firstNeeded } from '../src/revocations/revocation-log';

let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase(__filename);
});
afterAll(async () => {
  await db?.drop();
});

const START = Date.UTC(2026, 0, 1);
const USER = '0123456789abcdef01234567';
const s = (ms: number) => Math.floor(ms / 1000);

async function freshLog(collection: string, clock: { now: number }) {
  const model = modelOf(db.connection, `Revocation:${collection}`, revocationModel(db.connection).schema, collection);
  await model.init();
  return { model, log: createRevocationLog(model, { tokenLifetimeS: 3600, now: () => clock.now }) };
}

describe('the revocation log', () => {
  it('when entries are written, then a new reader gets them all and a reader at n gets those after n, in order', async () => {
    const clock = { now: START };
    const { log } = await freshLog('revocations_read', clock);
    for (let i = 0; i < 40; i++) await log.revokeTokens([{ userId: USER, digest: `d${i}`, expiresAt: s(START) + 600 }]);

    const all = await log.after(0);
    const rest = await log.after(25);

    expect(all.entries.map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(all.last).toBe(40);
    expect(rest.entries.map((e) => e.seq)).toEqual(Array.from({ length: 15 }, (_, i) => i + 26));
    expect(rest.last).toBe(40);
    expect((await log.after(40)).entries).toEqual([]);
  });

  it('when entries expire out of order, then pruning deletes only a prefix, and a reader behind it loses no live entry', async () => {
    const clock = { now: START };
    const { model, log } = await freshLog('revocations_prune', clock);
    // 1 and 3 expire after 10 minutes, 2 after an hour.
    await log.revokeTokens([{ userId: USER, digest: 'a', expiresAt: s(START) + 600 }]);
    await log.revokeUser('0123456789abcdef01234567');
    await log.revokeTokens([{ userId: USER, digest: 'c', expiresAt: s(START) + 600 }]);
    const reader = new RevocationList();
    reader.apply(await log.after(0), clock.now);

    clock.now = START + 20 * 60_000;
    await log.revokeTokens([{ userId: USER, digest: 'd', expiresAt: s(clock.now) + 600 }]);

    // 1 went; 2 is needed, so 3 stays too: no gap.
    expect((await model.find({}).lean()).map((e) => e._id).sort()).toEqual([2, 3, 4]);
    const behind = await log.after(1);
    expect(behind.entries.map((e) => e.seq)).toEqual([2, 3, 4]);
    reader.apply(await log.after(reader.seq), clock.now);
    expect(reader.seq).toBe(4);
  });

  it('when the log started again (its entries are gone), then a reader ahead of it reads it whole and starts over', async () => {
    const clock = { now: START };
    const { model, log } = await freshLog('revocations_restart', clock);
    for (let i = 0; i < 5; i++) await log.revokeTokens([{ userId: USER, digest: `x${i}`, expiresAt: s(START) + 600 }]);
    const reader = new RevocationList();
    reader.apply(await log.after(0), clock.now);
    await model.deleteMany({});
    const again = createRevocationLog(model, { tokenLifetimeS: 3600, now: () => clock.now });
    await again.revokeTokens([{ userId: USER, digest: 'new', expiresAt: s(START) + 600 }]);

    const batch = await again.after(reader.seq);
    const first = reader.apply(batch, clock.now);
    reader.apply(await again.after(reader.seq), clock.now);

    expect(batch.last).toBe(1);
    expect(first.caughtUp).toBe(false);
    expect(reader.seq).toBe(1);
    expect(reader.size).toBe(1);
  });

  it('when one token is revoked again and again, by two processes at once, then the log holds it once and its numbers have no gap', async () => {
    const clock = { now: START };
    const { model, log } = await freshLog('revocations_once', clock);
    const other = createRevocationLog(model, { tokenLifetimeS: 3600, now: () => clock.now });
    const same = { userId: USER, digest: 'same', expiresAt: s(START) + 600 };

    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? other : log).revokeTokens([same, { userId: USER, digest: `other${i}`, expiresAt: s(START) + 600 }]),
      ),
    );

    const kept = await model.find({}).lean();
    expect(kept.filter((e) => e.digest === 'same')).toHaveLength(1);
    expect(kept.map((e) => e._id).sort((a, b) => a - b)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
  });

  it('when a log from before the digest key holds a token twice, then the later entry loses its digest, no number goes, and the token is logged no more', async () => {
    const clock = { now: START };
    const { model, log } = await freshLog('revocations_before_key', clock);
    const until = s(START) + 600;
    await model.collection.insertMany([
      { _id: 1, userId: USER, digest: 'twice', until },
      { _id: 2, userId: USER, notBefore: s(START), until },
      { _id: 3, userId: USER, digest: 'twice', until },
    ] as never[]);

    await log.revokeTokens([{ userId: USER, digest: 'twice', expiresAt: until }]);
    await log.revokeTokens([{ userId: USER, digest: 'new', expiresAt: until }]);

    const kept = await model.find({}).sort({ _id: 1 }).lean();
    expect(kept.map((e) => [e._id, e.digest])).toEqual([
      [1, 'twice'],
      [2, undefined],
      [3, undefined],
      [4, 'new'],
    ]);
  });

  it('when the log holds 200,000 entries, then pruning finds the first one it must keep, without throwing', () => {
    const nowS = s(START);
    // The first 10,000 have expired; the other 190,000, listed in no order, are all still needed.
    const kept = Array.from({ length: 200_000 }, (_, i) => ({
      _id: 200_000 - i,
      until: 200_000 - i > 10_000 ? nowS + 600 : nowS - 1,
    }));

    expect(firstNeeded(kept, nowS, 200_000)).toBe(10_001);
    expect(firstNeeded(kept.slice(190_000), nowS, 200_000)).toBe(200_000);
  });
});
