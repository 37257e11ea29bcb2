/**
 * The shape of a deployment run's checks (the Compose run's and the Swarm run's): steps that act
 * and measure, each before its named cases, and cases counted in the run's report. A step that
 * throws stops the steps after it (they build on each other: one deployment, one traffic run).
 */
import { beforeAll, it } from '@jest/globals';

/** What a run's report keeps of its cases: how many passed, and each failure with its first line. */
export interface CaseTally {
  passed: number;
  failures: string[];
}

export interface RunSteps {
  /** A step of the run: acts and measures before its cases; a step that throws stops the later ones. */
  step(name: string, act: () => Promise<void>): void;
  /** A named case (`it`), counted in the report, and listed there when it fails. */
  check(name: string, judge: () => void | Promise<void>): void;
}

export const firstLine = (err: unknown): string => String((err as Error)?.message ?? err).split('\n')[0] ?? '';

/** Steps and cases that count in `tally`, say what failed, and write the report after each step. */
export function runSteps(
  tally: CaseTally,
  say: (line: string) => void,
  writeReport: (finished: boolean) => void,
): RunSteps {
  /** The step that threw, if one did: the steps after it do not run. */
  let broken: string | undefined;
  return {
    step(name, act) {
      beforeAll(async () => {
        if (broken) throw new Error(`not run: the step "${broken}" failed before it`);
        try {
          await act();
        } catch (err) {
          broken = name;
          tally.failures.push(`the step "${name}" stopped: ${firstLine(err)}`);
          say(`FAILED: the step "${name}": ${(err as Error).stack ?? err}`);
          throw err;
        } finally {
          writeReport(false);
        }
      });
    },
    check(name, judge) {
      it(name, async () => {
        try {
          await judge();
          tally.passed += 1;
        } catch (err) {
          tally.failures.push(`${name}: ${firstLine(err)}`);
          say(`FAILED: ${name}`);
          throw err;
        }
      });
    },
  };
}
