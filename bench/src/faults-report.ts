/**
 * Gathers the figures the fault tests wrote (one JSON file per scenario) into
 * bench/results/faults.json, and a readable bench/results/faults.md.
 * Usage: node faults-report.js <figures dir> <results dir>
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';

interface Summary {
  requests: number;
  byStatus: Record<string, number>;
  notJson: number;
  p50: number;
  p99: number;
  max: number;
}

function isSummary(value: unknown): value is Summary {
  return typeof value === 'object' && value !== null && 'requests' in value && 'byStatus' in value;
}

function describe(value: unknown): string {
  if (isSummary(value)) {
    const statuses = Object.entries(value.byStatus)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([status, count]) => `${status}: ${count}`)
      .join(', ');
    return `${value.requests} requests (${statuses || 'none'}); p50 ${value.p50} ms, p99 ${value.p99} ms, max ${value.max} ms`;
  }
  if (typeof value === 'object' && value !== null) return `\`${JSON.stringify(value)}\``;
  return String(value);
}

function main(): void {
  const [figuresDir = '', outDir = ''] = process.argv.slice(2);
  if (!existsSync(figuresDir)) {
    console.error(`faults-report: no figures in ${figuresDir}`);
    process.exitCode = 1;
    return;
  }
  const scenarios = readdirSync(figuresDir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(figuresDir, f), 'utf8')) as Record<string, unknown>);
  const at = new Date().toISOString();
  const machine = `${cpus().length} cores, Node ${process.version}`;
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'faults.json'), `${JSON.stringify({ at, machine, scenarios }, null, 2)}\n`);

  const lines = [
    '# Fault tests: figures',
    '',
    `Written by \`npm run test:faults\` at ${at} (${machine}). FerretDB and versitygw, real processes.`,
    'Times in ms. Statuses: counts of answers; "timeout" or "connection failed" when none came.',
    '',
  ];
  for (const { scenario, what, ...figures } of scenarios) {
    lines.push(`## ${String(scenario)}`, '', String(what ?? ''), '');
    for (const [name, value] of Object.entries(figures)) lines.push(`- **${name}**: ${describe(value)}`);
    lines.push('');
  }
  writeFileSync(join(outDir, 'faults.md'), lines.join('\n'));
  console.log(`faults-report: ${scenarios.length} scenarios → ${join(outDir, 'faults.md')}`);
}

main();
