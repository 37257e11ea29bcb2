/**
 * Scenario 5, upload links, through the gateway: a link with size writes nothing (a signature),
 * so it is held to a read by id; one without size (the contract's request) records the link and
 * takes a slot, so it is held to a write, a post create. Size-less links come from many callers,
 * as they do in use: one caller holds at most UPLOAD_MAX_OPEN_LINKS.
 *
 * The whole run measures it on its system of one process per part (run.ts); alone
 * (`BENCH_ONLY=uploads`) it runs on a system of its own in the default mode, every part in one
 * process, as `npm start` runs them.
 */
import jwt from 'jsonwebtoken';
import { Types } from 'mongoose';
import type { LoadResult, LoadSpec } from '../load';
import { interleave, type LoadSummary, runScript, type ScenarioOptions, startOwnSystem, summarize } from '../rounds';
import { call } from '../seed-load';
import { round } from '../stats';

/**
 * Callers of size-less links: each holds at most UPLOAD_MAX_OPEN_LINKS (50) open at once; their
 * tokens go to the load process as one argument, under its 128 KiB.
 */
const SIZELESS_CALLERS = 400;

export const UPLOAD_LINKS_GOAL = {
  withSize: 'upload-url ≥ 0.8 × GET /api/posts/:id',
  sizeless: 'upload-url without size ≥ 1 × POST /api/posts (costs no more than a create)',
} as const;

export interface UploadLinksReport {
  'upload-url': LoadSummary;
  'GET post': LoadSummary;
  'upload-url, no size': LoadSummary;
  'POST post': LoadSummary;
  ratio: number;
  goal: string;
  sizelessRatio: number;
  sizelessGoal: string;
  /** How the system ran: one process per part, or every part in one. */
  processes?: string;
}

export interface UploadLinksTarget {
  /** The gateway. */
  gw: string;
  /** A user's token, and the JWT secret that signed it (the size-less callers' tokens). */
  token: string;
  secret: string;
  /** A published post's path, for the read it is held to. */
  postPath: string;
  connections: number;
  rounds: number;
  load(spec: Omit<LoadSpec, 'durationS'>): Promise<LoadResult>;
}

/** The four loads, interleaved round by round, and the two ratios. */
export async function measureUploadLinks(t: UploadLinksTarget): Promise<UploadLinksReport> {
  const auth = { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' };
  const uploadBody = JSON.stringify({ contentType: 'text/plain', filename: 'bench.txt', size: 1024 });
  const sizelessBody = JSON.stringify({ contentType: 'text/plain', filename: 'bench.txt' });
  const callers = Array.from({ length: SIZELESS_CALLERS }, () => ({
    authorization: `Bearer ${jwt.sign({ id: new Types.ObjectId().toHexString() }, t.secret, { expiresIn: '1h' })}`,
    'content-type': 'application/json',
  }));
  const createBody = JSON.stringify({ title: 'bench', body: 'a post written by the benchmark' });
  const C = t.connections;
  const rounds = await interleave(
    [
      {
        name: 'upload-url',
        run: () =>
          t.load({ url: `${t.gw}/upload-url`, method: 'POST', headers: auth, body: uploadBody, connections: C }),
      },
      { name: 'GET post', run: () => t.load({ url: `${t.gw}${t.postPath}`, connections: C }) },
      {
        name: 'upload-url, no size',
        run: () =>
          t.load({
            url: `${t.gw}/upload-url`,
            method: 'POST',
            rotateHeaders: callers,
            body: sizelessBody,
            connections: C,
          }),
      },
      {
        name: 'POST post',
        run: () =>
          t.load({ url: `${t.gw}/api/posts`, method: 'POST', headers: auth, body: createBody, connections: C }),
      },
    ],
    t.rounds,
  );
  const s = (name: string) => summarize(rounds[name] ?? []);
  const [withSize, read, sizeless, create] = [s('upload-url'), s('GET post'), s('upload-url, no size'), s('POST post')];
  return {
    'upload-url': withSize,
    'GET post': read,
    'upload-url, no size': sizeless,
    'POST post': create,
    ratio: round(withSize.rps / (read.rps || 1), 3),
    goal: UPLOAD_LINKS_GOAL.withSize,
    sizelessRatio: round(sizeless.rps / (create.rps || 1), 3),
    sizelessGoal: UPLOAD_LINKS_GOAL.sizeless,
  };
}

/** Alone: on a system of its own, every part in one process (startSystem's default, npm start's mode). */
export async function runUploadLinks(o: ScenarioOptions): Promise<UploadLinksReport> {
  const { system, token } = await startOwnSystem(o, 'uploads');
  const gw = system.gatewayUrl;
  const post = await call(`${gw}/api/posts`, 'POST', token, { title: 'Read', body: 'the post the links are held to' });
  await call(`${gw}/api/posts/${post._id}`, 'PUT', token, { status: 'published' });
  o.log('bench: 5 upload links, every part in one process…');
  const report = await measureUploadLinks({
    gw,
    token,
    secret: o.jwtSecret,
    postPath: `/api/posts/${post._id}`,
    connections: o.connections,
    rounds: o.rounds,
    load: (spec) => runScript(o.node, o.dist, 'load.js', [JSON.stringify({ ...spec, durationS: o.durationS })]),
  });
  await system.stop();
  return { ...report, processes: 'every part in one process (SERVICES=all)' };
}

/** The two rows of the scenario; `label` says how the system ran when it is not the whole run's. */
export function uploadLinkRows(u: UploadLinksReport, label = ''): [string, string, string, string][] {
  return [
    [
      `5 upload links, with size${label}`,
      `upload-url ${u['upload-url'].rps.toFixed(0)} rps; GET post ${u['GET post'].rps.toFixed(0)} rps`,
      String(u.ratio),
      u.goal,
    ],
    [
      `5 upload links, without size${label}`,
      `upload-url, no size ${u['upload-url, no size'].rps.toFixed(0)} rps (${u['upload-url, no size'].failures} failed); POST post ${u['POST post'].rps.toFixed(0)} rps`,
      String(u.sizelessRatio),
      u.sizelessGoal,
    ],
  ];
}
