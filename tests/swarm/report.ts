/**
 * The Swarm run's figures: each step records what it measured here, and the report is written as
 * bench/results/swarm.json and swarm.md (or under $E2E_OUT) after each step and at the end, so an
 * interrupted run still leaves what it found, marked as incomplete.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { resultOf, sectionLines } from '../compose/report-text';

const OUT = process.env.E2E_OUT ?? join(__dirname, '..', '..', 'bench', 'results');
const STARTED_AT = Number(process.env.E2E_STARTED_AT ?? Date.now());

export interface SwarmReport {
  passed: number;
  failures: string[];
  [section: string]: unknown;
}

export const report: SwarmReport = { passed: 0, failures: [] };

export const seconds = (ms: number): number => Math.round(ms / 100) / 10;

export function say(line: string): void {
  process.stdout.write(`swarm-e2e: ${line}\n`);
}

/** Sections of swarm.md, in the order the run makes them: title and key in `report`. */
const SECTIONS: [string, string][] = [
  ['1. Deployed and ready', 'deployed'],
  ['2. The contract, through the stack’s balancer', 'contract'],
  ['3. A rolling update of every part, under traffic', 'rollout'],
  ['4. A release that is never ready, rolled back by Swarm', 'rollback'],
  ['5. A task killed', 'kill'],
  ['6. The gateway and posts scaled from 2 to 4 and back, under traffic', 'scale'],
  ['7. Live updates across the replacement of every realtime task', 'liveUpdates'],
  ['8. Every write that got a 2xx, read back', 'readBack'],
  ['The traffic of steps 3 to 6', 'traffic'],
  ['Secrets', 'secrets'],
];

function markdown(finished: boolean): string {
  const { failures } = report;
  const result = resultOf(report, finished);
  const lines = [
    '# The Swarm deployment, run on a single-node swarm (scripts/swarm-e2e.sh)',
    '',
    `Run ${new Date().toISOString()} on a 2-core machine; docker-compose.yml with docker-compose.swarm.yml,`,
    'two tasks of the gateway and of each service, FerretDB v1.24.2 on SQLite in MongoDB’s place.',
    `Wall time until the report: ${seconds(Date.now() - STARTED_AT)} s. Result: ${result}.`,
    '',
  ];
  if (failures.length) lines.push(...failures.map((f) => `- FAILED: ${f}`), '');
  lines.push(...sectionLines(report, SECTIONS));
  return `${lines.join('\n')}\n`;
}

/** Writes swarm.json and swarm.md; `finished` once every case has run. */
export function writeReport(finished: boolean): void {
  const written = { ...report, finished, wallSeconds: seconds(Date.now() - STARTED_AT) };
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, 'swarm.json'), `${JSON.stringify(written, null, 2)}\n`);
  writeFileSync(join(OUT, 'swarm.md'), markdown(finished));
  if (finished)
    say(
      `wrote ${join(OUT, 'swarm.md')}; ${report.failures.length === 0 ? 'every check passed' : `${report.failures.length} failed`}`,
    );
}
