/** The realtime service in this process, on a port, with a real redis-server of its own. */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createTokenVerifier, RevocationList } from '@cs/auth';
import type { LiveEvent } from '@cs/contract';
import { REPO_ROOT, type RunningServer, startRedis } from '@cs/devstack';
import { createEventBus, type EventBus } from '@cs/event-bus';
import { runServer } from '@cs/lifecycle';
import { createLogger } from '@cs/log';
import { TEST_JWT_SECRET } from '@cs/testkit';
import { Redis } from 'ioredis';
import { createApp, type Deps } from '../src/app';

export interface RealtimeHarness {
  url: string;
  /** The bus, as the services that publish see it. */
  bus: EventBus<LiveEvent>;
  /** The revocation list the service verifies tokens with. */
  revocations: RevocationList;
  /** The service's Redis, to look at what it keeps. */
  redis: Redis;
  stop(): Promise<void>;
}

export const RETENTION = { keepMs: 60_000, keepEvents: 5, keepBytes: 1_048_576 };

export async function startRealtime(config: Partial<Deps['config']> = {}): Promise<RealtimeHarness> {
  const redisServer: RunningServer = await startRedis({
    dataDir: join(REPO_ROOT, '.data', 'test', `realtime-${randomBytes(3).toString('hex')}`),
  });
  const redis = new Redis(redisServer.url);
  const revocations = new RevocationList();
  revocations.apply({ entries: [], last: 0 });
  const logger = createLogger({ name: 'realtime-test', level: 'silent' });
  const realtime = await createApp({
    config: {
      REALTIME_KEEPALIVE: 300,
      REALTIME_RETENTION: RETENTION.keepMs,
      REALTIME_RETENTION_EVENTS: RETENTION.keepEvents,
      REALTIME_RETENTION_BYTES: RETENTION.keepBytes,
      REALTIME_MAX_BUFFERED: 1_048_576,
      REALTIME_BUFFER_BUDGET: 64 * 1_048_576,
      REALTIME_STALL_TIMEOUT: 30_000,
      REALTIME_SHED_AT_HEAP_PERCENT: 95,
      REALTIME_STREAMS_PER_ACCOUNT: 20,
      ...config,
    },
    redis,
    logger,
    tokens: createTokenVerifier(TEST_JWT_SECRET, revocations),
  });
  const server = await runServer({ app: realtime.app, port: 0, host: '127.0.0.1', logger, handleSignals: false });
  const { port } = server.server.address() as AddressInfo;
  const bus = createEventBus<LiveEvent>(redis, { retention: RETENTION });
  return {
    url: `http://127.0.0.1:${port}`,
    bus,
    revocations,
    redis,
    async stop() {
      realtime.stop();
      server.server.closeAllConnections();
      await server.close();
      redis.disconnect();
      await redisServer.stop();
    },
  };
}
