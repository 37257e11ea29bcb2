/** The search benchmark's rows in latest.md, and its section. */
import type { Row } from '../report-json';
import type { SearchReport } from '../scenarios/search';

const side = (s: { rps: number; p50: number }) => `${Math.round(s.rps)} req/s, p50 ${s.p50} ms`;
/** The ratio, unless PocketBase answered too few to make one (its scan of 100,000 posts takes seconds). */
const ratioOf = (s: { ratio: number; p50Ratio: number; pocketbase: { rps: number } }) =>
  s.pocketbase.rps < 1 ? 'none: PocketBase answered less than once a second' : `${s.ratio} (p50 ${s.p50Ratio} ×)`;

export function searchRows(r: SearchReport): Row[] {
  const rows: Row[] = [];
  for (const size of r.sizes)
    for (const search of size.searches)
      rows.push([
        `search, ${size.posts} posts: ${search.name} (\`q=${search.q}\`)`,
        `ours ${side(search.ours)}; PocketBase ${side(search.pocketbase)}`,
        ratioOf(search),
        size.posts === 10_000 ? `${r.goals.rps}; ${r.goals.p50}` : 'reported',
      ]);
  for (const index of r.index)
    rows.push([
      `search, the words index of ${index.posts} posts, in memory`,
      `${index.heapMb} MB heap, built in ${index.buildMs} ms`,
      `${index.mbPer10k} MB per 10,000 posts`,
      'reported',
    ]);
  rows.push([
    'search: idle memory under npm start, every process',
    `PSS ${r.idleAfterStart.pssMb} MB (RSS ${r.idleAfterStart.rssMb} MB)`,
    '',
    r.goals.memory,
  ]);
  return rows;
}

export function searchSection(r: SearchReport): string {
  const lines = [
    `## Search beside PocketBase (${r.pocketbase})`,
    '',
    `\`BENCH_ONLY=search\`: ours (\`GET /api/posts?q=\`, npm start) beside PocketBase's \`~\` filter on title and content (SQL LIKE), sorted newest first, on the same posts written straight into each database; ${r.connections} clients, ${r.rounds} interleaved rounds of ${r.durationS} s. "matched": each side's total for the search.`,
    '',
    '| posts | search | ours | PocketBase | ratio | matched (ours / PocketBase) | ours PSS, every process |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const size of r.sizes)
    for (const s of size.searches)
      lines.push(
        `| ${size.posts} | ${s.name}: \`${s.q}\` | ${side(s.ours)}, p99 ${s.ours.p99} ms | ${side(s.pocketbase)}, p99 ${s.pocketbase.p99} ms | ${ratioOf(s)} | ${s.totals.ours} / ${s.totals.pocketbase} | ${size.oursMemory.pssMb} MB |`,
      );
  lines.push(
    '',
    `The first search after the posts were written (ours reads its listing whole then): ${r.sizes.map((x) => `${x.posts} posts, ours ${x.firstAnswerMs.ours} ms, PocketBase ${x.firstAnswerMs.pocketbase} ms`).join('; ')}.`,
  );
  lines.push(
    '',
    'The words index alone (`@cs/search` TextIndex, as listing-search.ts keeps it), built in the benchmark process, each search timed alone and run each time, never answered from a kept one (median of 50); over HTTP above, a search asked again is answered from the one kept until the words change (kept-results.ts):',
    '',
    '| posts | heap | per 10,000 posts | built in | searches, p50 (matched) |',
    '|---|---|---|---|---|',
  );
  for (const i of r.index)
    lines.push(
      `| ${i.posts} | ${i.heapMb} MB | ${i.mbPer10k} MB | ${i.buildMs} ms | ${i.searches.map((s) => `\`${s.q}\` ${s.p50Ms} ms (${s.matched})`).join('; ')} |`,
    );
  lines.push('');
  return lines.join('\n');
}
