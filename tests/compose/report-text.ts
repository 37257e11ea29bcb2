/**
 * What a deployment run's report says in words (the Compose run's compose.md, the Swarm run's
 * swarm.md): its result, and each section's figures as JSON under a title.
 */
import type { CaseTally } from './steps';

/** The report's result: incomplete while the run goes on, then every check passed or how many failed. */
export function resultOf({ passed, failures }: CaseTally, finished: boolean): string {
  if (!finished) return `**incomplete** (${passed} checks passed, ${failures.length} failed so far)`;
  return failures.length === 0
    ? `**every check passed** (${passed})`
    : `**${failures.length} checks failed** (${passed} passed)`;
}

/** Each section the run has figures for, in order: `## title` and its figures as JSON. */
export function sectionLines(report: Record<string, unknown>, sections: readonly [string, string][]): string[] {
  return sections.flatMap(([title, key]) =>
    report[key] === undefined ? [] : [`## ${title}`, '', '```json', JSON.stringify(report[key], null, 2), '```', ''],
  );
}
