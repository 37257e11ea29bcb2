/**
 * The sweeper's pace follows the backlog: what fell due is removed in one pass however much it is,
 * never a fixed number of records a pass (one address may create 600 uploads a minute).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sweepOnce } from '../src/app';
import type { UploadRecord } from '../src/model';
import { type FilesHarness, newCaller, startFiles } from './helpers';

let h: FilesHarness;
const owner = newCaller();
const DAY = 24 * 3_600_000;

beforeAll(async () => {
  h = await startFiles(__filename);
});
afterAll(async () => {
  await h.close();
});

/** Records as a flood of uploads leaves them, `ago` ms old. */
async function seed(count: number, fields: Partial<UploadRecord>, ago: number): Promise<string[]> {
  const keys = Array.from({ length: count }, () => `uploads/${randomUUID()}.txt`);
  const issuedAt = new Date(Date.now() - ago);
  await h.model.insertMany(
    keys.map((key) => ({ key, ownerId: owner.id, contentType: 'text/plain', size: null, issuedAt, ...fields })),
  );
  return keys;
}

const inState = (keys: string[], state: string) => h.model.collection.countDocuments({ key: { $in: keys }, state });
const pass = (sliceMs?: number) =>
  sweepOnce({ uploads: h.uploads, removals: h.removals, budgets: h.budgets }, h.logs.logger, sliceMs);

describe('the sweeper’s pace', () => {
  it('when 250 uploads fell due at once, then one pass releases every one of them', async () => {
    const keys = await seed(250, { state: 'issued' }, DAY + 60_000);

    await pass();

    expect(await inState(keys, 'released')).toBe(250);
  });

  it('when 150 released records are past their retention, then one pass purges every one of them', async () => {
    const keys = await seed(150, { state: 'released', purgeAfter: new Date(Date.now() - 1000) }, 2 * DAY);

    await pass();

    expect(await h.model.collection.countDocuments({ key: { $in: keys } })).toBe(0);
  });

  it('when a kind of work outlasts its slice of the pass, then the pass comes back to it until nothing is due', async () => {
    const keys = await seed(60, { state: 'issued' }, DAY + 60_000);

    await pass(30);

    expect(await inState(keys, 'released')).toBe(60);
    const rounds = h.logs
      .entries()
      .filter((e) => e.msg === 'sweeper pass')
      .map((e) => (e as { round?: number }).round ?? 0);
    expect(Math.max(...rounds)).toBeGreaterThan(1);
  });
});
