/**
 * Gathers the figures the fault tests wrote (one JSON file per scenario) into
 * bench/results/faults.json, and a readable bench/results/faults.md.
 * Usage: node faults-report.js <figures dir> <results dir>
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { Summary } from './traffic';

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
  if (Array.isArray(value) && value.length > 0 && value.every((row) => typeof row === 'object' && row !== null)) {
    const columns = [...new Set(value.flatMap((row) => Object.keys(row as object)))];
    const cells = (row: Record<string, unknown>) => columns.map((c) => String(row[c] ?? '')).join(' | ');
    return [
      '',
      '',
      `  | ${columns.join(' | ')} |`,
      `  | ${columns.map(() => '---').join(' | ')} |`,
      ...value.map((row) => `  | ${cells(row as Record<string, unknown>)} |`),
    ].join('\n');
  }
  if (Array.isArray(value)) return value.length > 0 ? value.map(String).join('; ') : 'none';
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value)
      .map(([k, v]) => `${k} ${String(v)}`)
      .join('; ');
  }
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
    '"during" counts every request that ended after the fault began and started before recovery.',
    '',
    'Promise 6 (hostile input) runs in `npm test`: gateway/test/hostile-input.test.ts (the corpus in',
    'gateway/test/corpus/hostile.json) and gateway/test/header-injection.test.ts (raw sockets).',
    'Promise 7 (soak) is `npm run soak`: bench/results/soak.md.',
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
