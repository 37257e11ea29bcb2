/**
 * The Compose run's figures: every step records what it measured here, and the report is written
 * as bench/results/compose.json and compose.md (or under $E2E_OUT) after each step and at the
 * end, so that an interrupted run still leaves what it found, marked as incomplete.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { resultOf, sectionLines } from './report-text';

const REPO_ROOT = join(__dirname, '..', '..');
const OUT = process.env.E2E_OUT ?? join(REPO_ROOT, 'bench', 'results');
const STARTED_AT = Number(process.env.E2E_STARTED_AT ?? Date.now());

export interface ImageFigures {
  service: string;
  image: string;
  buildSeconds: number;
  sizeMB: number;
}

export interface Report {
  /** What stands in for MongoDB in this run (the script says). */
  database: string;
  images?: ImageFigures[];
  uids?: Record<string, number>;
  /** How many named cases passed, and each failed case or step with its first line. */
  passed: number;
  failures: string[];
  [section: string]: unknown;
}

export const report: Report = { database: process.env.E2E_DATABASE ?? 'mongo:7', passed: 0, failures: [] };

export const seconds = (ms: number): number => Math.round(ms / 100) / 10;

export function say(line: string): void {
  process.stdout.write(`compose-e2e: ${line}\n`);
}

/** Sections of compose.md, in the order the run makes them: title and key in `report`. */
const SECTIONS: [string, string][] = [
  ['Refused without JWT_SECRET', 'withoutJwtSecret'],
  ['2. Up and healthy (s)', 'upSeconds'],
  ['2. Published ports', 'published'],
  ['2. What the host reaches', 'hostReaches'],
  ['2. The balancer’s answer to a malformed request', 'balancerMalformed'],
  ['3. The user journey', 'journey'],
  ['3. Deleting an account', 'accountDeletion'],
  ['3. Operations (profile ops): Prometheus and Jaeger', 'operations'],
  ['4. Deploys under traffic', 'deploys'],
  ['4-5. Traffic during the deploys and the scale-out', 'traffic'],
  ['5. Scale-out', 'scale'],
  ['6. A killed process', 'kill'],
  ['6. down and up again', 'persistence'],
  ['7. Secrets', 'secrets'],
  ['8. Shared limits, through the balancer', 'limits'],
  ['8. No gateway left: the balancer answers', 'noGatewayLeft'],
];

function markdown(finished: boolean): string {
  const { failures } = report;
  const result = resultOf(report, finished);
  const lines = [
    '# The Compose deployment, built and run (scripts/compose-e2e.sh)',
    '',
    `Run ${new Date().toISOString()} on a 2-core machine; MongoDB's place taken by ${report.database}.`,
    `Wall time until the report: ${seconds(Date.now() - STARTED_AT)} s. Result: ${result}.`,
    '',
  ];
  if (failures.length) lines.push(...failures.map((f) => `- FAILED: ${f}`), '');
  if (report.images) {
    lines.push('## 1. Images', '', '| service | build (s) | size (MB) | `id -u` |', '| --- | --- | --- | --- |');
    for (const i of report.images) {
      lines.push(
        `| ${i.service} | ${i.buildSeconds} | ${i.sizeMB} | ${report.uids?.[i.service] ?? 'exits after set-up'} |`,
      );
    }
    lines.push(
      '',
      `Third-party images: the database runs as uid ${report.uids?.mongo}, storage as uid ${report.uids?.storage}.`,
      '',
    );
  }
  lines.push(...sectionLines(report, SECTIONS));
  return `${lines.join('\n')}\n`;
}

/** Writes compose.json and compose.md; `finished` once every case has run. */
export function writeReport(finished: boolean): void {
  const written = { ...report, finished, wallSeconds: seconds(Date.now() - STARTED_AT) };
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, 'compose.json'), `${JSON.stringify(written, null, 2)}\n`);
  writeFileSync(join(OUT, 'compose.md'), markdown(finished));
  if (finished) {
    say(
      `wrote ${join(OUT, 'compose.md')}; ${report.failures.length === 0 ? 'every check passed' : `${report.failures.length} failed`}`,
    );
  }
}
