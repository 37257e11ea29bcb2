/**
 * What each part of a system of real processes is told: the environment it would get in
 * production, and, for the one process that runs every part, the same keys under each part's name.
 */
import { PROCESSES, type ProcessName } from './parts';
import { withDatabase } from './servers';
import type { SystemOptions } from './system-options';

/** Where the parts are, for their environments (`environments`). */
export interface PartAddresses {
  /** A part's address as the others call it. */
  url: (name: ProcessName) => string;
  /** The gateway's port, or the balancer's in front of the gateways. */
  gatewayPort: number;
  /** The event bus. */
  busUrl: string;
  /** Whether the balancer is in front of every part. */
  balanced: boolean;
}

/**
 * Each part's environment (`envOf`), the keys every part gets (`common`), and the one process's
 * environment that runs them all (`oneProcessEnv`).
 */
export function environments(options: SystemOptions, where: PartAddresses) {
  const { mongoUrl, storage, jwtSecret, dbPrefix = '' } = options;
  const { url, busUrl, balanced } = where;
  const LOOPBACK = '127.0.0.1';
  const frontendOrigin = options.frontendOrigin ?? `http://localhost:${where.gatewayPort}`;
  // The web client's address, for the links identity writes into its e-mails.
  const webUrl = (frontendOrigin.split(',')[0] ?? frontendOrigin).trim();

  const common = {
    NODE_ENV: 'production',
    JWT_SECRET: jwtSecret,
    JWT_EXPIRES_IN: options.jwtExpiresIn ?? '1h',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    FRONTEND_ORIGIN: frontendOrigin,
    ...options.env,
  };
  // Only the gateway (or the balancer in front of the gateways), with its rate limits and token
  // checks, is reachable from other machines: a service called directly would skip both.
  const envOf: Record<ProcessName, Record<string, string | undefined>> = {
    identity: {
      HOST: LOOPBACK,
      MONGO_URL: withDatabase(mongoUrl, `${dbPrefix}identity`),
      // Undefined unsets it: without smtpUrl, identity must not inherit ours (a test run's).
      SMTP_URL: options.smtpUrl || undefined,
      WEB_URL: webUrl,
      // Where the API is reached from outside: an OpenID Connect provider sends the browser back
      // there. On this machine, by its address: a browser may try "localhost" on IPv6 first.
      PUBLIC_URL: options.env?.PUBLIC_URL ?? process.env.PUBLIC_URL ?? `http://127.0.0.1:${where.gatewayPort}`,
      // Deleting an account deletes its data in the other services.
      POSTS_URL: url('posts'),
      NOTES_URL: url('notes'),
      FILES_URL: url('files'),
    },
    // Every process but identity follows identity's revocation log (IDENTITY_URL).
    posts: {
      HOST: LOOPBACK,
      MONGO_URL: withDatabase(mongoUrl, `${dbPrefix}posts`),
      IDENTITY_URL: url('identity'),
      REDIS_URL: busUrl,
    },
    notes: {
      HOST: LOOPBACK,
      MONGO_URL: withDatabase(mongoUrl, `${dbPrefix}notes`),
      FILES_URL: url('files'),
      IDENTITY_URL: url('identity'),
      REDIS_URL: busUrl,
    },
    files: {
      HOST: LOOPBACK,
      IDENTITY_URL: url('identity'),
      MONGO_URL: withDatabase(mongoUrl, `${dbPrefix}files`),
      S3_ENDPOINT: storage.endpoint,
      S3_PUBLIC_ENDPOINT: storage.publicEndpoint ?? storage.endpoint,
      S3_ACCESS_KEY_ID: storage.accessKeyId,
      S3_SECRET_ACCESS_KEY: storage.secretAccessKey,
      STORAGE_BUCKET: storage.bucket,
      STORAGE_REGION: storage.region,
      // Told when the check removes the object of an attachment (a size-less link's).
      NOTES_URL: url('notes'),
    },
    // The streams: they follow the bus, and verify tokens as every service does.
    realtime: { HOST: LOOPBACK, IDENTITY_URL: url('identity'), REDIS_URL: busUrl },
    gateway: {
      // Behind the balancer the gateways listen on loopback, and take the client's address from
      // the one hop in front of them (the balancer adds it to X-Forwarded-For).
      HOST: balanced ? LOOPBACK : (options.gatewayHost ?? '0.0.0.0'),
      ...(balanced ? { TRUST_PROXY: '1' } : {}),
      ...(!balanced && options.connectionsPerAddress !== undefined
        ? { CONNECTIONS_PER_ADDRESS: String(options.connectionsPerAddress) }
        : {}),
      ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : {}),
      IDENTITY_URL: url('identity'),
      POSTS_URL: url('posts'),
      NOTES_URL: url('notes'),
      FILES_URL: url('files'),
      REALTIME_URL: url('realtime'),
    },
  };

  /**
   * One process's environment: the gateway's keys as they are, each service's with its name first
   * (server/src/main.ts). The services' addresses are the process's own: it sets them itself.
   */
  const oneProcessEnv = (): Record<string, string | undefined> => {
    const env: Record<string, string | undefined> = {};
    const isAddress = (key: string) => PROCESSES.some((name) => key === `${name.toUpperCase()}_URL`);
    for (const name of PROCESSES) {
      const prefix = name === 'gateway' ? '' : `${name.toUpperCase()}_`;
      for (const [key, value] of Object.entries({ ...envOf[name], ...options.processEnv?.[name] })) {
        // A key a service must not have (undefined, unset in its own process) is empty under its
        // name, which overrides the common one: its reader takes empty as not given.
        if (!isAddress(key)) env[`${prefix}${key}`] = prefix ? (value ?? '') : value;
      }
    }
    return env;
  };
  return { common, envOf, oneProcessEnv };
}
