import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import { freePort } from '../src/process';

const run = promisify(execFile);

describe('freePort', () => {
  it('when another launcher has handed out ports of a range, then this one never hands them out again', async () => {
    // A range of five, chosen afresh each run (a claim outlives the run that made it).
    const lowest = 15_000 + Math.floor(Math.random() * 10_000);
    const range = { lowest, highest: lowest + 4 };
    const script = `
      const { freePort } = require(${JSON.stringify(join(__dirname, '../dist/src/process.js'))});
      (async () => {
        const ports = [];
        for (let i = 0; i < 5; i++) ports.push(await freePort(${JSON.stringify(range)}));
        console.log(JSON.stringify(ports));
      })();`;
    const { stdout } = await run(process.execPath, ['-e', script]);
    const theirs: number[] = JSON.parse(stdout);

    const ours: number[] = [];
    for (let i = 0; i < 5; i++) ours.push(await freePort(range));

    // Free to bind all along (nothing listens on them), yet claimed by the other launcher.
    expect(ours.filter((port) => theirs.includes(port))).toEqual([]);
  });
});
