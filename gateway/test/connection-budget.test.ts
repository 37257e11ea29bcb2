/**
 * How many client connections the gateway takes in all (`maxConnections`): what the open-files
 * limit leaves once the upstream pools and a reserve have theirs, so that a request it took can
 * always open its upstream socket. The review's gateway had 20,000 descriptors and ran out.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { connectionBudget, openFilesLimit, RESERVED_DESCRIPTORS } from '../src/connection-limits';

const POOLS = 4 * 256; // four upstreams, 256 sockets each

describe('the connection budget', () => {
  it('when the limit is 20,000 descriptors, then the pools and the reserve keep theirs and clients get the rest', () => {
    const budget = connectionBudget(20_000, POOLS);

    expect(budget).toBe(20_000 - POOLS - RESERVED_DESCRIPTORS);
    expect(budget + POOLS + RESERVED_DESCRIPTORS).toBeLessThanOrEqual(20_000);
  });

  it('when the limit is smaller than the pools, then each client connection keeps room for one upstream socket', () => {
    const budget = connectionBudget(1_024, POOLS);

    expect(budget).toBe((1_024 - RESERVED_DESCRIPTORS) / 2);
    // Every connection with a request upstream at once still fits.
    expect(2 * budget + RESERVED_DESCRIPTORS).toBeLessThanOrEqual(1_024);
  });

  it('when the limit leaves nothing, then no connection', () => {
    expect(connectionBudget(100, POOLS)).toBe(0);
  });
});

describe('the open-files limit', () => {
  it('when Linux lists the limits, then it is the soft limit on open files', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'limits-')), 'limits');
    writeFileSync(
      file,
      [
        'Limit                     Soft Limit           Hard Limit           Units     ',
        'Max processes             95348                95348                processes ',
        'Max open files            20000                40000                files     ',
      ].join('\n'),
    );

    expect(openFilesLimit(file)).toBe(20_000);
  });

  it('when there is no such file, then unknown', () => {
    expect(openFilesLimit(join(tmpdir(), 'no-such-limits-file'))).toBeUndefined();
  });

  it('when the process reads its own, then a whole number', () => {
    expect(Number.isInteger(openFilesLimit())).toBe(true);
  });
});
