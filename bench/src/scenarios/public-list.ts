/** Scenario 4, the public list at two sizes: total latency (1 connection) against the query alone. */
import type { BenchSystem } from '../bench-system';
import type { LoadResult } from '../load';
import { interleave, load } from '../measure';
import type { Report, Row } from '../report-json';
import { DURATION_S, SIZES } from '../run-settings';
import { median, percentile, round } from '../stats';

export async function publicList({ gw, postsUrl, posts, PostModel, doc, listingChanged }: BenchSystem) {
  const list: Record<string, unknown>[] = [];
  let seeded = 0;
  for (const size of SIZES) {
    const batch = Array.from({ length: size - seeded }, (_, i) =>
      doc(seeded + i + 100, { tags: i % 10 === 0 ? ['listed'] : ['other'] }),
    );
    for (let i = 0; i < batch.length; i += 1000) await posts.insertMany(batch.slice(i, i + 1000));
    seeded = size;
    await listingChanged();
    // The query alone, through mongoose with the service's filter, sort and limit, one at a
    // time, interleaved with the HTTP rounds so both see the same machine.
    const filter = { status: 'published', tags: 'listed' };
    const queryOnly = async (): Promise<LoadResult> => {
      const times: number[] = [];
      const deadline = Date.now() + DURATION_S * 1000;
      while (Date.now() < deadline) {
        const t = process.hrtime.bigint();
        await Promise.all([
          PostModel.countDocuments(filter),
          PostModel.find(filter).sort({ createdAt: -1, _id: -1 }).limit(20).lean(),
        ]);
        times.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      return {
        requests: times.length,
        rps: times.length / DURATION_S,
        p50: median(times),
        p99: 0,
        non2xx: 0,
        errors: 0,
        timeouts: 0,
      };
    };
    // The same request, one at a time, split by the service's own Server-Timing header:
    // overhead = the request's time in the service (app) minus its database part (db), and
    // as the client saw it (whole round trip minus db). Exact per request, whatever the db.
    const splits: { inService: number[]; roundTrip: number[] } = { inService: [], roundTrip: [] };
    const split = async (): Promise<LoadResult> => {
      const deadline = Date.now() + DURATION_S * 1000;
      let n = 0;
      while (Date.now() < deadline) {
        const t = process.hrtime.bigint();
        const res = await fetch(`${postsUrl}/api/posts?tag=listed&limit=20`);
        await res.arrayBuffer();
        const total = Number(process.hrtime.bigint() - t) / 1e6;
        const timing = res.headers.get('server-timing') ?? '';
        const db = Number(/db;dur=([\d.]+)/.exec(timing)?.[1]);
        const app = Number(/app;dur=([\d.]+)/.exec(timing)?.[1]);
        splits.inService.push(app - db);
        splits.roundTrip.push(total - db);
        n += 1;
      }
      return { requests: n, rps: n / DURATION_S, p50: 0, p99: 0, non2xx: 0, errors: 0, timeouts: 0 };
    };
    const http = await interleave([
      { name: 'service', run: () => load({ url: `${postsUrl}/api/posts?tag=listed&limit=20`, connections: 1 }) },
      { name: 'gateway', run: () => load({ url: `${gw}/api/posts?tag=listed&limit=20`, connections: 1 }) },
      { name: 'query', run: queryOnly },
      { name: 'split', run: split },
    ]);
    const dbP50 = http.query?.p50 ?? 0;
    // autocannon's percentiles are whole milliseconds; with one connection the mean latency
    // (1000 / rps) is finer, so both are reported. The overhead is the Server-Timing split:
    // the service answers from its kept page, so subtracting the query's time says nothing.
    const mean = (rps = 0) => round(1000 / Math.max(rps, 1e-9), 2);
    list.push({
      posts: size,
      dbQueryP50Ms: round(dbP50, 2),
      dbQueryMeanMs: mean(http.query?.rps),
      serviceP50Ms: http.service?.p50,
      serviceMeanMs: mean(http.service?.rps),
      gatewayP50Ms: http.gateway?.p50,
      gatewayMeanMs: mean(http.gateway?.rps),
      overheadInServiceP50Ms: round(median(splits.inService), 2),
      overheadRoundTripP50Ms: round(median(splits.roundTrip), 2),
      overheadRoundTripP99Ms: round(percentile(splits.roundTrip, 0.99), 2),
    });
  }
  return { sizes: list, goal: 'service overhead ≤ 2 ms at p50' };
}

export function publicListRows(publicList: Report): Row[] {
  return publicList.sizes.map((x: Report) => [
    `4 list, ${x.posts} posts`,
    `query p50 ${x.dbQueryP50Ms} ms (mean ${x.dbQueryMeanMs}); service p50 ${x.serviceP50Ms} ms (mean ${x.serviceMeanMs}); gateway p50 ${x.gatewayP50Ms} ms (mean ${x.gatewayMeanMs})`,
    `Server-Timing split, p50: ${x.overheadInServiceP50Ms} ms in the service, ${x.overheadRoundTripP50Ms} ms round trip (p99 ${x.overheadRoundTripP99Ms}); the service answers from its kept page, the query is what the first list after a change pays`,
    publicList.goal,
  ]);
}
