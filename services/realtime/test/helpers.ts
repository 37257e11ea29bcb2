/**
 * The realtime service in this process, on a port, with a real redis-server of its own, and a
 * reader of its streams as a fetch-based client reads them.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createTokenVerifier, RevocationList } from '@cs/auth';
import { REPO_ROOT, type RunningServer, startRedis } from '@cs/devstack';
import { createEventBus, type EventBus } from '@cs/event-bus';
import { runServer } from '@cs/lifecycle';
import { createLogger } from '@cs/log';
import { TEST_JWT_SECRET } from '@cs/testkit';
import { Redis } from 'ioredis';
import { createApp } from '../src/app';

export interface RealtimeHarness {
  url: string;
  /** The bus, as the services that publish see it. */
  bus: EventBus;
  /** The revocation list the service verifies tokens with. */
  revocations: RevocationList;
  stop(): Promise<void>;
}

export const RETENTION = { keepMs: 60_000, keepEvents: 5 };

export async function startRealtime(): Promise<RealtimeHarness> {
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
      REALTIME_MAX_BUFFERED: 1_048_576,
    },
    redis,
    logger,
    tokens: createTokenVerifier(TEST_JWT_SECRET, revocations),
  });
  const server = await runServer({ app: realtime.app, port: 0, host: '127.0.0.1', logger, handleSignals: false });
  const { port } = server.server.address() as AddressInfo;
  const bus = createEventBus(redis, { retention: RETENTION });
  return {
    url: `http://127.0.0.1:${port}`,
    bus,
    revocations,
    async stop() {
      realtime.stop();
      server.server.closeAllConnections();
      await server.close();
      redis.disconnect();
      await redisServer.stop();
    },
  };
}

export interface ReceivedEvent {
  id?: string;
  event?: string;
  data?: unknown;
}

/** A stream as a client reads it: its events as they come, its comment lines, and its end. */
export class StreamReader {
  readonly events: ReceivedEvent[] = [];
  comments = 0;
  ended = false;
  private buffered = '';

  private constructor(
    readonly response: Response,
    private readonly controller: AbortController,
  ) {}

  static async open(url: string, headers: Record<string, string> = {}): Promise<StreamReader> {
    const controller = new AbortController();
    const reader = new StreamReader(await fetch(url, { headers, signal: controller.signal }), controller);
    if (reader.response.ok) void reader.read();
    return reader;
  }

  /** Waits until `count` events came (or the stream ended), at most `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 5_000): Promise<ReceivedEvent[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.events.length < count && !this.ended && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return this.events;
  }

  async waitForEnd(timeoutMs = 5_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    return this.ended;
  }

  close(): void {
    this.controller.abort();
  }

  private async read(): Promise<void> {
    const body = this.response.body;
    if (!body) return;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of body) {
        this.buffered += decoder.decode(chunk as Uint8Array, { stream: true });
        let end = this.buffered.indexOf('\n\n');
        while (end !== -1) {
          this.take(this.buffered.slice(0, end));
          this.buffered = this.buffered.slice(end + 2);
          end = this.buffered.indexOf('\n\n');
        }
      }
    } catch {
      // Aborted by close().
    }
    this.ended = true;
  }

  private take(block: string): void {
    const event: ReceivedEvent = {};
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) {
        this.comments += 1;
        continue;
      }
      const colon = line.indexOf(':');
      const [field, value] = [line.slice(0, colon), line.slice(colon + 1).trimStart()];
      if (field === 'id') event.id = value;
      else if (field === 'event') event.event = value;
      else if (field === 'data') event.data = JSON.parse(value);
    }
    if (event.event !== undefined) this.events.push(event);
  }
}
