/**
 * Scenario 15, thumbnails of image attachments (issue 51), on a system of its own, every part in
 * one process (`BENCH_ONLY=thumbnails`):
 * - a cached thumbnail's link against an attachment's link, req/s (goal ≥ 0.9×): both are a
 *   note read, files' record read and a signature; the attachment's link also HEADs storage;
 * - the first generation's p50 for a 12-megapixel JPEG (noise, so that it is not trivially
 *   compressible): storage read, decode, resize, encode, storage write;
 * - a bystander's reads (`GET /api/posts`) during a burst of 100 first generations, p50 against
 *   its own without the burst (goal: within 2×). The burst's answers are counted: past THUMB_WAIT
 *   (10 s) a waiting request is refused with 503, as designed.
 */
import sharp from 'sharp';
import type { LoadResult, LoadSpec } from '../load';
import { interleave, type LoadSummary, runScript, type ScenarioOptions, startOwnSystem, summarize } from '../rounds';
import { call } from '../seed-load';
import { median, round } from '../stats';

export const THUMBNAILS_GOAL = {
  cached: 'cached thumbnail link ≥ 0.9 × attachment link',
  bystander: 'bystander p50 during a burst of 100 first generations ≤ 2 × without',
} as const;

const BURST = 100;
const FIRSTS = 7;

export interface ThumbnailsReport {
  'thumbnail link, cached': LoadSummary;
  'attachment link': LoadSummary;
  ratio: number;
  goal: string;
  /** ms, each a thumbnail made on its request: 12 megapixels (4000x3000 JPEG) to 300x0. */
  firstGenerationP50: number;
  firstGenerations: number[];
  imageBytes: number;
  'bystander, alone': LoadSummary;
  'bystander, during the burst': LoadSummary;
  bystanderRatio: number;
  bystanderGoal: string;
  /** The burst's answers by status, and how long it took. */
  burst: { statuses: Record<string, number>; seconds: number };
  processes: string;
}

async function noteWithImage(gw: string, token: string, image: Buffer, i: number): Promise<string> {
  const link = (await call(`${gw}/upload-url`, 'POST', token, {
    contentType: 'image/jpeg',
    filename: `photo-${i}.jpg`,
    size: image.length,
  })) as { url: string; key: string; headers: Record<string, string> };
  const put = await fetch(link.url, { method: 'PUT', headers: link.headers, body: image });
  if (!put.ok) throw new Error(`storage refused the PUT: ${put.status}`);
  const note = await call(`${gw}/api/notes`, 'POST', token, { title: `photo ${i}`, attachmentKey: link.key });
  return note._id as string;
}

export async function runThumbnails(o: ScenarioOptions): Promise<ThumbnailsReport> {
  const { system, token } = await startOwnSystem(o, 'thumbnails');
  const gw = system.gatewayUrl;
  const auth = { authorization: `Bearer ${token}` };
  const load = (spec: Omit<LoadSpec, 'durationS'>): Promise<LoadResult> =>
    runScript(o.node, o.dist, 'load.js', [JSON.stringify({ ...spec, durationS: o.durationS })]);
  const post = await call(`${gw}/api/posts`, 'POST', token, { title: 'Read', body: 'the bystander reads' });
  await call(`${gw}/api/posts/${post._id}`, 'PUT', token, { status: 'published' });

  const image = await sharp({
    create: {
      width: 4000,
      height: 3000,
      channels: 3,
      background: '#808080',
      noise: { type: 'gaussian', mean: 128, sigma: 20 },
    },
  })
    .jpeg({ quality: 80 })
    .toBuffer();
  o.log(`bench: 15 thumbnails: ${FIRSTS + BURST} notes with a 12-megapixel JPEG (${image.length} bytes)…`);
  const notes: string[] = [];
  for (let i = 0; i < FIRSTS + BURST; i++) notes.push(await noteWithImage(gw, token, image, i));
  const firsts = notes.slice(0, FIRSTS);
  const burst = notes.slice(FIRSTS);

  const firstGenerations: number[] = [];
  for (const id of firsts) {
    const started = performance.now();
    const res = await fetch(`${gw}/api/notes/${id}/attachment?thumb=300x0`, { headers: auth });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`first generation: ${res.status}`);
    firstGenerations.push(round(performance.now() - started));
  }

  const [cachedNote] = firsts;
  const rounds = await interleave(
    [
      {
        name: 'thumbnail link, cached',
        run: () =>
          load({
            url: `${gw}/api/notes/${cachedNote}/attachment?thumb=300x0`,
            headers: auth,
            connections: o.connections,
          }),
      },
      {
        name: 'attachment link',
        run: () => load({ url: `${gw}/api/notes/${cachedNote}/attachment`, headers: auth, connections: o.connections }),
      },
    ],
    o.rounds,
  );
  const cached = summarize(rounds['thumbnail link, cached'] ?? []);
  const attachment = summarize(rounds['attachment link'] ?? []);

  const bystander = () => load({ url: `${gw}/api/posts`, connections: o.connections });
  const alone = summarize([await bystander(), await bystander()]);
  o.log(`bench: 15 thumbnails: a burst of ${BURST} first generations beside a bystander…`);
  const started = performance.now();
  const statuses: Record<string, number> = {};
  const fired = Promise.all(
    burst.map(async (id) => {
      const res = await fetch(`${gw}/api/notes/${id}/attachment?thumb=100x100`, { headers: auth });
      await res.arrayBuffer();
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    }),
  );
  const during = summarize([await bystander()]);
  await fired;
  const seconds = round((performance.now() - started) / 1000);
  await system.stop();
  return {
    'thumbnail link, cached': cached,
    'attachment link': attachment,
    ratio: round(cached.rps / (attachment.rps || 1), 3),
    goal: THUMBNAILS_GOAL.cached,
    firstGenerationP50: round(median(firstGenerations)),
    firstGenerations,
    imageBytes: image.length,
    'bystander, alone': alone,
    'bystander, during the burst': during,
    bystanderRatio: round(during.p50 / (alone.p50 || 1), 3),
    bystanderGoal: THUMBNAILS_GOAL.bystander,
    burst: { statuses, seconds },
    processes: 'every part in one process (SERVICES=all)',
  };
}

/** The scenario's rows in the report. */
export function thumbnailRows(t: ThumbnailsReport): [string, string, string, string][] {
  return [
    [
      '15 thumbnails, cached link',
      `thumbnail link ${t['thumbnail link, cached'].rps.toFixed(0)} rps; attachment link ${t['attachment link'].rps.toFixed(0)} rps`,
      String(t.ratio),
      t.goal,
    ],
    [
      '15 thumbnails, first generation (12 MP JPEG to 300x0)',
      `p50 ${t.firstGenerationP50} ms (${t.firstGenerations.join(', ')} ms)`,
      '',
      'reported',
    ],
    [
      `15 thumbnails, bystander during a burst of ${BURST} first generations`,
      `GET /api/posts p50 ${t['bystander, during the burst'].p50} ms vs ${t['bystander, alone'].p50} ms alone; burst ${JSON.stringify(t.burst.statuses)} in ${t.burst.seconds} s`,
      String(t.bystanderRatio),
      t.bystanderGoal,
    ],
  ];
}
