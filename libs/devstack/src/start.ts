/**
 * `npm start`: the whole system on embedded defaults. Starts (or uses) a MongoDB-protocol server,
 * an S3 server and an SMTP server, prepares the bucket and its CORS rule, starts the four services
 * and the gateway, prints one ready line, and stops everything on Ctrl-C or SIGTERM.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './process';
import { ensureTools, type RunningServer, startMail, startMongo, startStorage } from './servers';
import { type RunningSystem, startSystem } from './system';

const DEV_STORAGE = {
  accessKeyId: 'devaccess',
  secretAccessKey: 'devsecret-devsecret',
  region: 'us-east-1',
  bucket: 'content-dev',
};

async function main(): Promise<void> {
  const dotenv = join(process.cwd(), '.env');
  if (existsSync(dotenv)) process.loadEnvFile(dotenv);
  const env = process.env;
  const port = Number(env.PORT ?? 3000);
  // The web client is served by the gateway: its page may be opened under either name.
  const frontendOrigin = env.FRONTEND_ORIGIN ?? `http://localhost:${port},http://127.0.0.1:${port}`;

  let jwtSecret = env.JWT_SECRET ?? '';
  if (!jwtSecret) {
    jwtSecret = randomBytes(32).toString('hex');
    console.log('No JWT_SECRET configured: using a random development secret (tokens end with this run).');
  }

  const dataDir = env.DEV_DATA_DIR ?? join(REPO_ROOT, '.data', 'dev');
  if (!env.MONGO_URL || !env.S3_ENDPOINT || !env.SMTP_URL) ensureTools();
  const storageSettings = {
    accessKeyId: env.S3_ACCESS_KEY_ID ?? DEV_STORAGE.accessKeyId,
    secretAccessKey: env.S3_SECRET_ACCESS_KEY ?? DEV_STORAGE.secretAccessKey,
    region: env.STORAGE_REGION ?? DEV_STORAGE.region,
    bucket: env.STORAGE_BUCKET ?? DEV_STORAGE.bucket,
  };

  const servers: RunningServer[] = [];
  let system: RunningSystem | undefined;
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    console.log('Stopping…');
    await system?.stop();
    await Promise.all(servers.map((s) => s.stop()));
    process.exit(code);
  };
  process.once('SIGINT', () => void stop(0));
  process.once('SIGTERM', () => void stop(0));

  try {
    // Each is kept as soon as it runs, so that one failing to start does not leave the others behind.
    const keep = <T extends RunningServer>(server: T): T => {
      servers.push(server);
      return server;
    };
    const [mongo, storage, mail] = await Promise.all([
      startMongo({ dataDir }).then(keep),
      startStorage({ dataDir, ...storageSettings }).then(keep),
      startMail({ dataDir }).then(keep),
    ]);
    console.log(`MongoDB protocol: ${mongo.kind} at ${mongo.url}`);
    if (mongo.fallback) {
      console.log(`                  ${mongo.fallback}: FerretDB runs on SQLite, which reads whole collections`);
      console.log('                  for lists and slows down beyond a few thousand posts.');
    }
    console.log(`S3 storage:       ${storage.kind} at ${storage.url}`);
    console.log(
      mail.child
        ? `Mail (Mailpit):   ${mail.apiUrl} (password-reset e-mails land here)`
        : `Mail (SMTP):      ${mail.kind}${mail.apiUrl ? `, read at ${mail.apiUrl}` : ''}`,
    );
    // In a child: the S3 client is big, and this process lives as long as the system does.
    const bucket = { endpoint: storage.url, ...storageSettings, corsOrigins: frontendOrigin.split(',') };
    await promisify(execFile)(process.execPath, [join(__dirname, 'prepare-bucket.js'), JSON.stringify(bucket)]);

    system = await startSystem({
      dataDir,
      mongoUrl: mongo.url,
      storage: { endpoint: storage.url, publicEndpoint: env.S3_PUBLIC_ENDPOINT ?? storage.url, ...storageSettings },
      jwtSecret,
      jwtExpiresIn: env.JWT_EXPIRES_IN ?? '1h',
      gatewayPort: port,
      gatewayHost: env.HOST,
      frontendOrigin,
      smtpUrl: mail.url,
      metrics: true,
    });
    console.log(`Logs:             ${join(dataDir, 'logs')}`);
    const metrics = Object.values(system.processes).map((p) => `${p.name} ${p.metricsUrl}`);
    console.log(`Metrics:          ${metrics.join(', ')}`);
    console.log(`Ready: the content service and its web client are at http://localhost:${port} (Ctrl-C stops it)`);
  } catch (err) {
    console.error(`Could not start: ${(err as Error).message}`);
    await stop(1);
  }
}

void main();
