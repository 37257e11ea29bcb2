/**
 * `npm start`: the whole system on embedded defaults. Starts (or uses) a MongoDB-protocol server,
 * an S3 server and an SMTP server, prepares the bucket and its CORS rule, starts the gateway and
 * the five services, in one process (SERVICES=all, the default) or one each (SERVICES=split), prints
 * one ready line, and stops everything on Ctrl-C or SIGTERM: the system's processes, then the
 * servers.
 *
 * This process is the supervisor: it owns the servers and the one process, which runs as its
 * child and is started again when it crashes (supervisor.ts). It loads none of the product's code.
 * Each server and the one process get a signal from the kernel when this process dies, even by
 * SIGKILL (process.ts `parentDeath`), so none is left running without it.
 *
 * `REPLICAS=3 GATEWAYS=2 npm start` runs that many of each service and of the gateway behind
 * HAProxy, with the rate limits counted in Redis (REDIS_URL, or Debian's redis-server started here).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv, promisify } from 'node:util';
import { startOidcProvider } from './oidc-provider';
import { canBind, freePort, REPO_ROOT } from './process';
import { ensureTools, type RunningServer, startMail, startMongo, startRedis, startStorage } from './servers';
import { type SupervisedSystem, superviseOneProcess } from './supervisor';
import { type RunningSystem, startSystem } from './system';

const DEV_STORAGE = {
  accessKeyId: 'devaccess',
  secretAccessKey: 'devsecret-devsecret',
  region: 'us-east-1',
  bucket: 'content-dev',
};

async function main(): Promise<void> {
  // `.env` is read as a deployment reads an env file, and this process's own environment stays as it
  // was given: a setting of the file that the environment does not set goes to every part, as its
  // settings are given (`env` of the system's options).
  const dotenv = join(process.cwd(), '.env');
  const fileSettings = existsSync(dotenv) ? settingsOf(parseEnv(readFileSync(dotenv, 'utf8'))) : {};
  const env: NodeJS.ProcessEnv = { ...fileSettings, ...process.env };
  const port = Number(env.PORT ?? 3000);
  // The web client is served by the gateway: its page may be opened under either name.
  const frontendOrigin = env.FRONTEND_ORIGIN ?? `http://localhost:${port},http://127.0.0.1:${port}`;

  let jwtSecret = env.JWT_SECRET ?? '';
  if (!jwtSecret) {
    jwtSecret = randomBytes(32).toString('hex');
    console.log('No JWT_SECRET configured: using a random development secret (tokens end with this run).');
  }

  const dataDir = env.DEV_DATA_DIR ?? join(REPO_ROOT, '.data', 'dev');
  const replicas = wholeNumber(env, 'REPLICAS');
  const gateways = wholeNumber(env, 'GATEWAYS');
  const scaled = replicas > 1 || gateways > 1;
  const oneProcess = processModel(env, scaled) === 'all';
  if (!env.MONGO_URL || !env.S3_ENDPOINT || !env.SMTP_URL) ensureTools();
  const storageSettings = {
    accessKeyId: env.S3_ACCESS_KEY_ID ?? DEV_STORAGE.accessKeyId,
    secretAccessKey: env.S3_SECRET_ACCESS_KEY ?? DEV_STORAGE.secretAccessKey,
    region: env.STORAGE_REGION ?? DEV_STORAGE.region,
    bucket: env.STORAGE_BUCKET ?? DEV_STORAGE.bucket,
  };

  const servers: RunningServer[] = [];
  let system: RunningSystem | SupervisedSystem | undefined;
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    console.log('Stopping…');
    await system?.stop();
    await Promise.all(servers.map((s) => s.stop()));
    process.exit(code);
  };
  // Every signal, not the first alone: npm forwards each one it gets to us, so a SIGTERM sent to
  // the process group (as the contract suite's runner sends it) arrives twice, and with a
  // listener for the first alone the second would end this process at once, mid-stop.
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  try {
    // Each is kept as soon as it runs, so that one failing to start does not leave the others behind.
    const keep = <T extends RunningServer>(server: T): T => {
      servers.push(server);
      return server;
    };
    const [mongo, storage, mail, redis, oidc] = await Promise.all([
      startMongo({ dataDir }).then(keep),
      startStorage({ dataDir, ...storageSettings }).then(keep),
      startMail({ dataDir }).then(keep),
      // The event bus, and scaled, where the gateways count their limits together (or each would
      // admit the limit again).
      env.REDIS_URL ? undefined : startRedis({ dataDir }).then(keep),
      devOidcProvider(env, dataDir, port).then((found) => {
        if (found) keep(found.server);
        return found;
      }),
    ]);
    const redisUrl = (env.REDIS_URL || redis?.url) as string;
    console.log(`Redis:            ${redis ? "Debian's redis-server" : 'REDIS_URL'} at ${redisUrl}`);
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
    console.log(
      oidc
        ? `Sign-in (OIDC):   ${oidc.server.kind} at ${oidc.server.url} as provider dev (any name logs in)`
        : env.OIDC_PROVIDERS !== undefined
          ? `Sign-in (OIDC):   OIDC_PROVIDERS=${env.OIDC_PROVIDERS}`
          : 'Sign-in (OIDC):   none (the dev provider is for a PUBLIC_URL on this machine)',
    );
    // In a child: the S3 client is big, and this process lives as long as the system does.
    const bucket = { endpoint: storage.url, ...storageSettings, corsOrigins: frontendOrigin.split(',') };
    await promisify(execFile)(process.execPath, [join(__dirname, 'prepare-bucket.js'), JSON.stringify(bucket)]);

    const options = {
      env: fileSettings,
      // Identity alone knows the provider's client secret.
      ...(oidc ? { processEnv: { identity: oidc.settings } } : {}),
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
      oneProcess,
      replicas,
      gateways,
      busUrl: redisUrl,
      redisUrl: scaled ? redisUrl : undefined,
      // Scaled, the balancer caps connections per client address with the gateway's setting.
      connectionsPerAddress: env.CONNECTIONS_PER_ADDRESS ? Number(env.CONNECTIONS_PER_ADDRESS) : undefined,
    };
    // One process: a child of this one, started again if it crashes (supervisor.ts).
    const supervised = oneProcess ? await superviseOneProcess(options) : undefined;
    const split = supervised ? undefined : await startSystem(options);
    system = supervised ?? split;
    if (split?.balancer) {
      console.log(`Replicas:         ${replicas} of each service, ${gateways} gateways, behind HAProxy`);
      console.log(`                  (its statistics at ${split.balancer.statsUrl})`);
      console.log(`Rate limits:      counted in Redis at ${redisUrl}`);
    }
    console.log(
      supervised
        ? `Processes:        the gateway and every service in one (SERVICES=all, pid ${supervised.pid}), started again if it dies`
        : 'Processes:        one for the gateway and one for each service (SERVICES=split)',
    );
    console.log(`Logs:             ${join(dataDir, 'logs')}`);
    const metrics = supervised
      ? [supervised.metricsUrl]
      : Object.values(split?.replicas ?? {})
          .flat()
          .map((p) => `${p.name}${split?.balancer ? `-${p.replica + 1}` : ''} ${p.metricsUrl}`);
    console.log(`Metrics:          ${metrics.join(', ')}`);
    console.log(`Ready: the content service and its web client are at http://localhost:${port} (Ctrl-C stops it)`);
  } catch (err) {
    console.error(`Could not start: ${(err as Error).message}`);
    await stop(1);
  }
}

/** The dev provider's port, unless DEV_OIDC_PORT names another (or a second system holds it). */
const DEV_OIDC_PORT = 4010;

/**
 * The development OpenID Connect provider, `dev`, unless OIDC_PROVIDERS says which to use (empty:
 * none), and the settings that name it to identity. Any name logs in there and no address is ever
 * vouched for (dev/oidc-provider); identity refuses its loopback issuer unless PUBLIC_URL is on
 * loopback too, so with a PUBLIC_URL elsewhere it is not started. Its port stays the same from run
 * to run: the issuer is half of an identity, and the accounts in .data/dev outlive a run.
 */
async function devOidcProvider(env: NodeJS.ProcessEnv, dataDir: string, port: number) {
  if (env.OIDC_PROVIDERS !== undefined || !onThisMachine(env.PUBLIC_URL)) return undefined;
  const secret = randomBytes(24).toString('hex');
  const clientId = 'content-service-dev';
  // The gateway under either name, and PUBLIC_URL when it is set (identity refuses this provider
  // unless PUBLIC_URL is on loopback too).
  const origins = ['localhost', '127.0.0.1'].map((host) => `http://${host}:${port}`);
  const redirects = [...origins, ...(env.PUBLIC_URL ? [env.PUBLIC_URL.replace(/\/+$/, '')] : [])].map(
    (origin) => `${origin}/api/auth/oidc/dev/callback`,
  );
  // Another system on this machine (a second npm start) may hold the default port: then a free one,
  // and the identities of that run are new ones.
  const wanted = Number(env.DEV_OIDC_PORT ?? DEV_OIDC_PORT);
  const taken = env.DEV_OIDC_PORT === undefined && !(await canBind(wanted));
  const server = await startOidcProvider({
    dataDir,
    mode: 'dev',
    port: taken ? await freePort() : wanted,
    clients: [{ client_id: clientId, client_secret: secret, redirect_uris: redirects }],
  });
  const settings = {
    OIDC_PROVIDERS: 'dev',
    OIDC_DEV_ISSUER: server.url,
    OIDC_DEV_CLIENT_ID: clientId,
    OIDC_DEV_CLIENT_SECRET: secret,
    OIDC_DEV_NAME: 'Dev',
  };
  return { server, settings };
}

/** Whether a PUBLIC_URL (unset: the gateway's own) is on loopback, as the dev provider must be. */
function onThisMachine(publicUrl: string | undefined): boolean {
  if (!publicUrl) return true;
  const { hostname } = URL.parse(publicUrl) ?? { hostname: '' };
  return ['localhost', '127.0.0.1', '[::1]'].includes(hostname);
}

/**
 * SERVICES: `all` runs the gateway and every service in one process (the default), `split` one
 * process each, as Compose does. Replicas need a process each: scaled, the default is `split`.
 */
function processModel(env: NodeJS.ProcessEnv, scaled: boolean): 'all' | 'split' {
  const value = env.SERVICES || (scaled ? 'split' : 'all');
  if (value !== 'all' && value !== 'split') throw new Error(`SERVICES must be all or split, not ${value}`);
  if (value === 'all' && scaled) throw new Error('REPLICAS and GATEWAYS run one process each: SERVICES=split');
  return value;
}

/** The settings of an env file that this process's environment does not set. */
function settingsOf(file: NodeJS.Dict<string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(file).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && process.env[entry[0]] === undefined,
    ),
  );
}

/** A launcher setting that counts something: unset is 1. */
function wholeNumber(env: NodeJS.ProcessEnv, key: string): number {
  const value = env[key];
  if (value === undefined || value === '') return 1;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 16)
    throw new Error(`${key} must be a whole number from 1 to 16, not ${value}`);
  return n;
}

main().catch((err: Error) => {
  console.error(`Could not start: ${err.message}`);
  process.exit(1);
});
