/**
 * startPart: a part's stops run together once it closes, each waited for, before its clients
 * close; a part without a database or a token check gets neither.
 */

import { createLogger } from '@cs/log';
import { describe, expect, it } from '@jest/globals';
import { type PartDefinition, startPart } from '../src/index';

interface Config {
  PORT: number;
  HOST: string;
  METRICS_PORT: number;
  METRICS_HOST: string;
  LOG_LEVEL: string;
}

const config: Config = { PORT: 0, HOST: '127.0.0.1', METRICS_PORT: 0, METRICS_HOST: '127.0.0.1', LOG_LEVEL: 'silent' };

describe('startPart', () => {
  it('when a started part closes, then each of its stops is called and waited for, and only then its clients close', async () => {
    const said: string[] = [];
    const slowStop = async () => {
      said.push('stop the poller');
      await new Promise((resolve) => setTimeout(resolve, 50));
      said.push('the poller’s pass is over');
    };
    const part: PartDefinition<Config> = {
      name: 'example',
      readConfig: () => config,
      keepAliveTimeoutMs: 1_000,
      build: async ({ connection, tokens }) => {
        said.push(`built with${connection ? '' : 'out'} a database and with${tokens ? '' : 'out'} a verifier`);
        return {
          app: { callback: () => () => {} },
          stops: [slowStop, () => said.push('stop the timer')],
          onClose: async () => {
            said.push('close the clients');
          },
        };
      },
    };

    const started = await startPart(part, config, createLogger({ name: 'example', level: 'silent' }));
    await started.close();

    expect(started.keepAliveTimeoutMs).toBe(1_000);
    expect(said).toEqual([
      'built without a database and without a verifier',
      'stop the poller',
      'stop the timer',
      'the poller’s pass is over',
      'close the clients',
    ]);
  });
});
