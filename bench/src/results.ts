/** Where a bench entry's report goes: `<name>.json` and `<name>.md` under its output directory. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Writes the report, then its table (the figures are kept even when the table fails), and prints the table. */
export function writeResults<R>(out: string, name: string, report: R, markdown: (report: R) => string): void {
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
  const table = markdown(report);
  writeFileSync(join(out, `${name}.md`), table);
  process.stdout.write(table);
}
