import { join } from 'node:path';
import { type Child, freePort, httpOk, REPO_ROOT, spawnChild, waitFor } from '@cs/devstack';
import { overTheNetwork } from '@cs/lifecycle';
import type { DeletedAccounts } from '@cs/mongo';
import { ObjectStorage } from '@cs/storage';
import {
  api,
  type Caller,
  captureLogger,
  emptyRevocationLog,
  newCaller,
  openTestDatabase,
  TEST_JWT_SECRET,
  type TestDatabase,
  type TestEventBus,
  testEventBus,
  testStorageSettings,
  verifierWithoutRevocations,
} from '@cs/testkit';
import { createApp } from '../src/app';
import { type NoteModel, noteModel, type PendingReleaseModel, pendingReleaseModel } from '../src/model';
import type { NoteEvents } from '../src/note-events';
import type { ReleaseOutbox } from '../src/release-outbox';

/**
 * How long the suite's notes app keeps resending a claim or a download link that cannot reach
 * files: longer than the files process takes to start again here (1-4 s, under load).
 */
export const FILES_RETRY_WINDOW_MS = 8000;

/**
 * The real files service as its own process (built `dist/`), on a port of its own, that a test
 * can stop and start again to play "files is down".
 */
export class FilesService {
  private child: Child | undefined;

  private constructor(
    readonly port: number,
    private readonly db: TestDatabase,
    /** Identity, as files sees it here: its revocation log, with nothing revoked. */
    private readonly identity: Awaited<ReturnType<typeof emptyRevocationLog>>,
    /** Settings of the test's own, over the ones below. */
    private readonly env: Record<string, string> = {},
  ) {}

  static async create(file: string, env: Record<string, string> = {}): Promise<FilesService> {
    return new FilesService(
      await freePort(),
      await openTestDatabase(`files-for-${file}`),
      await emptyRevocationLog(),
      env,
    );
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts the process unless it is already running. */
  async start(): Promise<void> {
    if (this.child) return;
    const s3 = testStorageSettings();
    this.child = spawnChild({
      name: 'files',
      command: process.execPath,
      args: [join(REPO_ROOT, 'services/files/dist/src/server.js')],
      env: {
        PORT: String(this.port),
        JWT_SECRET: TEST_JWT_SECRET,
        MONGO_URL: this.db.url,
        S3_ENDPOINT: s3.endpoint,
        S3_ACCESS_KEY_ID: s3.accessKeyId,
        S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
        STORAGE_BUCKET: s3.bucket,
        STORAGE_REGION: s3.region,
        IDENTITY_URL: this.identity.url,
        LOG_LEVEL: 'warn',
        ...this.env,
      },
      logFile: join(process.env.TEST_DATA_DIR ?? join(REPO_ROOT, '.data'), 'logs', `files-${this.port}.log`),
    });
    // Ready: its database, its storage, and its revocation list read.
    await waitFor('files', () => httpOk(`${this.url}/readyz`), { child: this.child });
  }

  async stop(): Promise<void> {
    await this.child?.stop();
    this.child = undefined;
  }

  async dispose(): Promise<void> {
    await this.stop();
    await this.db.drop();
    await this.identity.close();
  }
}

export interface NotesHarness {
  app: Awaited<ReturnType<typeof createApp>>['app'];
  http: ReturnType<typeof api>;
  /** The notes database, for a test's own connections to it (replicas). */
  dbUrl: string;
  notes: NoteModel;
  pending: PendingReleaseModel;
  outbox: ReleaseOutbox;
  /** The service's tombstones of deleted accounts. */
  accounts: DeletedAccounts;
  files: FilesService;
  bucket: ObjectStorage;
  logs: ReturnType<typeof captureLogger>;
  /** The bus the service publishes its change events to: a stream of this test's own. */
  events: TestEventBus;
  /** The service's outbox of change events. */
  noteEvents: NoteEvents;
  close(): Promise<void>;
}

/** `filesUrl`: where notes reaches files, given the real process's address (the address itself by default). */
export async function startNotes(
  file: string,
  {
    filesUrl = (url: string) => url,
    filesEnv = {},
  }: { filesUrl?: (url: string) => string; filesEnv?: Record<string, string> } = {},
): Promise<NotesHarness> {
  const files = await FilesService.create(file, filesEnv);
  await files.start();
  const db = await openTestDatabase(file);
  const logs = captureLogger('notes');
  const events = testEventBus();
  let built: Awaited<ReturnType<typeof createApp>>;
  try {
    built = await createApp({
      config: {
        JWT_SECRET: TEST_JWT_SECRET,
        FILES_URL: filesUrl(files.url),
        FILES_TIMEOUT: 2000,
        FILES_RETRY_WINDOW: FILES_RETRY_WINDOW_MS,
      },
      connection: db.connection,
      logger: logs.logger,
      tokens: verifierWithoutRevocations(),
      bus: events.bus,
      reach: overTheNetwork,
    });
  } catch (err) {
    // Never leave the files process behind when the suite cannot start.
    events.close();
    await files.dispose();
    await db.drop();
    throw err;
  }
  const { app, outbox, accounts } = built;
  const bucket = new ObjectStorage(testStorageSettings());
  return {
    app,
    http: api(app.callback()),
    dbUrl: db.url,
    notes: noteModel(db.connection),
    pending: pendingReleaseModel(db.connection),
    outbox,
    accounts,
    files,
    bucket,
    logs,
    events,
    noteEvents: built.events,
    async close() {
      events.close();
      bucket.destroy();
      await files.dispose();
      await db.drop();
    },
  };
}

export { type Caller, newCaller };

/** Through the files service, as a browser would: a link, then a real PUT to storage. */
export async function upload(
  h: NotesHarness,
  caller: Caller,
  bytes: string | Uint8Array = 'file bytes',
  { put = true } = {},
) {
  const res = await fetch(`${h.files.url}/upload-url`, {
    method: 'POST',
    headers: { ...caller.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ contentType: 'text/plain', filename: 'note.txt', size: Buffer.byteLength(bytes) }),
  });
  if (!res.ok) throw new Error(`upload-url answered ${res.status}: ${await res.text()}`);
  const link = (await res.json()) as { url: string; key: string; headers: Record<string, string> };
  if (put) {
    const stored = await fetch(link.url, { method: 'PUT', headers: link.headers, body: bytes });
    if (!stored.ok) throw new Error(`storage refused the PUT: ${stored.status}`);
  }
  return link.key;
}
