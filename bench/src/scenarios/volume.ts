/**
 * Scenario 10, the embedded default at volume: a post by id and the public list by tag through the
 * gateway, 10 clients, with N posts stored (a tenth of them tagged "listed"). The list is read with
 * its pages kept, then while a writer changes a published post every second (each change makes
 * every kept page be computed again), and one request is timed right after a change: what a page
 * costs to compute.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Types } from 'mongoose';
import type { BenchSystem } from '../bench-system';
import { load } from '../measure';
import type { Report, Row } from '../report-json';
import { CONNECTIONS as C, CHANGE_EVERY_MS, DURATION_S } from '../run-settings';
import { median, round } from '../stats';

/** The measure at a size: the posts stored counted once, here, and added to up to each size asked. */
export async function volumeAt({ gw, postPath, auth, posts, doc, listingChanged }: BenchSystem) {
  let stored = await posts.estimatedDocumentCount();
  const otherAuthor = new Types.ObjectId();
  let changes = 0;
  const changeListing = async () => {
    changes += 1;
    const res = await fetch(`${gw}${postPath}`, {
      method: 'PUT',
      headers: auth,
      body: JSON.stringify({ title: `Bench post, change ${changes}` }),
    });
    if (!res.ok) throw new Error(`PUT ${postPath}: ${res.status}`);
  };
  const atVolume = async (size: number) => {
    while (stored < size) {
      const first = stored;
      const n = Math.min(1000, size - first);
      await posts.insertMany(
        Array.from({ length: n }, (_, i) =>
          doc(first + i + 100_000, { authorId: otherAuthor, tags: (first + i) % 10 === 0 ? ['listed'] : ['other'] }),
        ),
      );
      stored += n;
    }
    await listingChanged();
    const list = `${gw}/api/posts?tag=listed&limit=20`;
    const byId = await load({ url: `${gw}${postPath}`, connections: C }, 2 * DURATION_S);
    const kept = await load({ url: list, connections: C }, 2 * DURATION_S);
    let writing = true;
    const writer = (async () => {
      let made = 0;
      while (writing) {
        await changeListing();
        made += 1;
        await sleep(CHANGE_EVERY_MS);
      }
      return made;
    })();
    const changing = await load({ url: list, connections: C }, 2 * DURATION_S);
    writing = false;
    const made = await writer;
    const computeMs: number[] = [];
    for (let i = 0; i < 5; i++) {
      await changeListing();
      const t = process.hrtime.bigint();
      const res = await fetch(list);
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`GET ${list}: ${res.status}`);
      computeMs.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    return {
      posts: stored,
      byId,
      listKept: kept,
      listChanging: { ...changing, changes: made },
      firstAfterChangeMs: round(median(computeMs), 1),
    };
  };
  return atVolume;
}

export const volumeFigures = (sizes: unknown[]) => ({
  sizes,
  changeEveryMs: CHANGE_EVERY_MS,
  goal: 'at 10,000 posts, 10 clients: list by tag with no 5xx and p50 ≤ 50 ms; by id p50 ≤ 5 ms',
});

const failed = (x: Report): number => (x.non2xx ?? 0) + (x.errors ?? 0) + (x.timeouts ?? 0);

export function volumeRows(volume: Report): Row[] {
  return volume.sizes.map(
    (v: Report) =>
      [
        `10 embedded default, ${v.posts} posts`,
        `by id ${v.byId.rps.toFixed(0)} rps, p50 ${v.byId.p50} ms, p99 ${v.byId.p99} ms; list by tag, pages kept: ${v.listKept.rps.toFixed(0)} rps, p50 ${v.listKept.p50} ms, p99 ${v.listKept.p99} ms, ${failed(v.listKept)} failed; list while a post changes every ${volume.changeEveryMs / 1000} s (${v.listChanging.changes} changes): ${v.listChanging.rps.toFixed(0)} rps, p50 ${v.listChanging.p50} ms, p99 ${v.listChanging.p99} ms, ${failed(v.listChanging)} failed; one list right after a change ${v.firstAfterChangeMs} ms`,
        `by id p50 ${v.byId.p50} ms; list p50 ${v.listKept.p50} ms (${v.listChanging.p50} ms changing), ${failed(v.listKept) + failed(v.listChanging)} failed`,
        volume.goal,
      ] as Row,
  );
}
