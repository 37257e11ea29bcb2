/**
 * The real OpenID Connect provider (dev/oidc-provider/provider.mjs, the certified `oidc-provider`
 * package), started as Mailpit is: on loopback, in a child process, stopped by its pid.
 */
import { join } from 'node:path';
import { freePort, httpOk, REPO_ROOT, spawnChild, waitFor } from './process';
import type { RunningServer } from './servers';

/** A client the provider knows, in the package's own metadata names. */
export interface OidcClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  /** `native`: a loopback redirect URI matches on any port (RFC 8252), for servers on free ports. */
  application_type?: 'web' | 'native';
}

export interface OidcProviderOptions {
  dataDir: string;
  /**
   * `dev`: any name logs in, the address is `<name>@dev.invalid` and never said to be verified.
   * `test`: the login page also takes an e-mail and whether the provider vouches for it.
   */
  mode: 'dev' | 'test';
  clients: OidcClient[];
  port?: number;
}

/** The provider at `url`, its issuer (`http://127.0.0.1:<port>`). */
export async function startOidcProvider({ dataDir, mode, clients, port }: OidcProviderOptions): Promise<RunningServer> {
  const listenPort = port ?? (await freePort());
  const child = spawnChild({
    name: 'oidc-provider',
    command: process.execPath,
    // Its work is small (a few clients; the package's memory store keeps at most a thousand
    // records): a low heap ceiling, the smallest young generation, no V8 worker threads and no
    // optimizing compiler took its idle PSS from 49 to 39 MB, measured, under npm start's 250 MB.
    args: [
      '--max-old-space-size=48',
      '--max-semi-space-size=1',
      '--v8-pool-size=0',
      '--lite-mode',
      join(REPO_ROOT, 'dev', 'oidc-provider', 'provider.mjs'),
      '--port',
      String(listenPort),
      '--mode',
      mode,
    ],
    env: { OIDC_PROVIDER_CLIENTS: JSON.stringify(clients), NODE_ENV: 'development' },
    logFile: join(dataDir, 'logs', `oidc-provider-${listenPort}.log`),
  });
  const url = `http://127.0.0.1:${listenPort}`;
  await waitFor('oidc-provider', () => httpOk(`${url}/.well-known/openid-configuration`), { child }).catch(
    async (err) => {
      await child.stop();
      throw err;
    },
  );
  return {
    kind: `oidc-provider (${mode})`,
    url,
    child,
    port: listenPort,
    stop: async () => void (await child.stop()),
  };
}
