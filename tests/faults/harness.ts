/**
 * The real system for fault tests, with the servers a test will break started by the test
 * itself (never the shared ones, never an external MONGO_URL / S3_ENDPOINT): a fault is always
 * done to a process this test started, by pid.
 */

import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer, connect as dial, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { S3Client } from '@aws-sdk/client-s3';
import {
  prepareBucket,
  REPO_ROOT,
  type RunningServer,
  type RunningSystem,
  type SystemOptions,
  startMongo,
  startStorage,
} from '@cs/devstack';
import { startTestSystem, TEST_JWT_SECRET, testStorageSettings } from '@cs/testkit';

/** The standard one, for the modules that import it from here. */
export { sleep };

export async function until(
  probe: () => Promise<boolean>,
  timeoutMs: number,
  everyMs = 50,
): Promise<number | undefined> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (await probe().catch(() => false)) return Date.now() - started;
    await sleep(everyMs);
  }
  return undefined;
}

/** A server of our own that a test can kill and start again on the same port, with its data. */
export class OwnServer {
  private constructor(
    private readonly start: (port?: number) => Promise<RunningServer>,
    public server: RunningServer,
  ) {}

  static async launch(start: (port?: number) => Promise<RunningServer>): Promise<OwnServer> {
    return new OwnServer(start, await start());
  }

  get url(): string {
    return this.server.url;
  }

  get pid(): number {
    const pid = this.server.child?.pid;
    if (pid === undefined) throw new Error('not a server of ours');
    return pid;
  }

  /**
   * SIGKILL: gone at once, as in a crash or a lost machine. What the server ran on (FerretDB's
   * PostgreSQL) is stopped with it, so that `restart` starts the whole of it again on its data.
   */
  async kill(): Promise<void> {
    process.kill(this.pid, 'SIGKILL');
    await this.server.child?.exited;
    await this.server.stop();
  }

  async restart(): Promise<void> {
    this.server = await this.start(this.server.port);
  }

  stop(): Promise<void> {
    return this.server.stop();
  }
}

export interface FaultSystem {
  system: RunningSystem;
  /** Where the services' databases are: `withDatabase(mongoUrl, dbPrefix + service)`. */
  mongoUrl: string;
  dbPrefix: string;
  mongo?: OwnServer;
  storage?: OwnServer;
  bucket: string;
  stop(): Promise<void>;
}

/**
 * The whole system with rate limits off (the load is one client IP) and, when asked, its own
 * MongoDB-protocol server and its own S3 server.
 */
export async function startFaultSystem({
  ownMongo = false,
  ownStorage = false,
  ...overrides
}: { ownMongo?: boolean; ownStorage?: boolean } & Partial<SystemOptions> = {}): Promise<FaultSystem> {
  const id = randomBytes(3).toString('hex');
  const dataDir = join(process.env.TEST_DATA_DIR ?? join(REPO_ROOT, '.data', 'faults'), `faults-${id}`);
  const shared = testStorageSettings();
  const bucket = `faults-${id}`;
  const mongo = ownMongo ? await OwnServer.launch((port) => startMongo({ dataDir, port, env: {} })) : undefined;
  const storage = ownStorage
    ? await OwnServer.launch((port) => startStorage({ dataDir, port, ...shared, env: {} }))
    : undefined;
  const storageSettings = { ...shared, endpoint: storage?.url ?? shared.endpoint, bucket };
  await prepareBucket({ ...storageSettings, corsOrigins: [] });
  const mongoUrl = mongo?.url ?? process.env.MONGO_URL ?? '';
  const dbPrefix = `f${id}_`;
  const system = await startTestSystem({
    // One process each, as Compose runs them: most of these tests stop or kill one of them.
    oneProcess: false,
    mongoUrl,
    dbPrefix,
    storage: storageSettings,
    jwtSecret: TEST_JWT_SECRET,
    ...overrides,
    env: { AUTH_RATE_LIMIT: '0', RATE_LIMIT: '0', PUBLIC_CHANGES_PER_MINUTE: '0', ...overrides.env },
  });
  return {
    system,
    mongoUrl,
    dbPrefix,
    mongo,
    storage,
    bucket,
    async stop() {
      await system.stop();
      await Promise.all([mongo?.stop(), storage?.stop()]);
    },
  };
}

/** An S3 client of the system's own storage server (`ownStorage`), to look at what it holds. */
export function ownStorageClient(f: FaultSystem): S3Client {
  if (!f.storage) throw new Error('the system has no storage server of its own');
  const { region, accessKeyId, secretAccessKey } = testStorageSettings();
  return new S3Client({
    endpoint: f.storage.url,
    region,
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
  });
}

/** Figures of one fault scenario, for bench/results/faults.md (scripts/test-faults.sh writes it). */
export function recordFigures(scenario: string, figures: Record<string, unknown>): void {
  const dir = process.env.FAULTS_FIGURES_DIR ?? join(REPO_ROOT, '.data', 'faults-figures');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${scenario}.json`), `${JSON.stringify({ scenario, ...figures }, null, 2)}\n`);
}

/**
 * A TCP relay in front of a real server (Redis, say: any protocol), for a test that cuts a
 * process off from it without touching either: the process is pointed at `url`, and every byte
 * goes on both ways as it is until `hold`. From then on, what the process sends is read and
 * dropped at the relay: none of it ever reaches the server (nothing is left in a buffer to go on
 * later), and the process sees a connection that is open and silent.
 */
export interface TcpRelay {
  /** `target` with the relay's host and port in its place: where the process is pointed. */
  readonly url: string;
  /** Drops from now on whatever the relay's clients send. */
  hold(): void;
  /** Bytes the relay's clients sent while held, all dropped. */
  readonly dropped: number;
  close(): Promise<void>;
}

export async function startTcpRelay(target: string): Promise<TcpRelay> {
  const to = new URL(target);
  let held = false;
  let dropped = 0;
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const server = createServer((client) => {
    const upstream = dial(Number(to.port), to.hostname);
    track(client);
    track(upstream);
    client.on('data', (chunk: Buffer) => {
      if (held) {
        dropped += chunk.length;
        return;
      }
      if (!upstream.write(chunk)) {
        client.pause();
        upstream.once('drain', () => client.resume());
      }
    });
    upstream.pipe(client);
    // Either end gone: so is the other (a killed process's connection ends at the server too).
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString().replace(/\/$/, ''),
    hold() {
      held = true;
    },
    get dropped() {
      return dropped;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
