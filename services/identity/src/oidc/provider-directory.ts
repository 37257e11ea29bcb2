/**
 * The configured providers, each usable once its discovery document has been read. Discovery
 * runs at start; a provider that cannot be reached does not stop the start: it is tried again
 * every interval, and left out of the list (and its routes answer 503) until it answers.
 *
 * The relying party is openid-client, a certified one: it reads the discovery document, and later
 * checks each ID token (signature by the provider's published keys, `iss`, `aud`, `nonce`, expiry)
 * rather than code of ours doing it by hand. Plain http is allowed only for an issuer on loopback
 * (provider-settings.ts refuses any other http issuer).
 */
import { allowInsecureRequests, ClientSecretBasic, type Configuration, discovery } from 'openid-client';
import { onLoopback, type ProviderSettings } from './provider-settings';

/** A discovery that takes longer than this has failed, and waits for the next round. */
const DISCOVERY_TIMEOUT_S = 5;

export interface Provider {
  settings: ProviderSettings;
  /** openid-client's configuration: the provider's metadata and our client's. */
  client: Configuration;
}

export interface ProviderDirectory {
  /** The usable providers, in the order of OIDC_PROVIDERS: `GET /api/auth/providers`. */
  list(): { id: string; name: string }[];
  /** Whether a provider of this name is configured, discovered or not. */
  isConfigured(id: string): boolean;
  /** The provider of this name once discovered; undefined before, or when none has the name. */
  usable(id: string): Provider | undefined;
  /** Reads every discovery document not yet read; the ones that fail are tried on the next call. */
  discoverMissing(): Promise<void>;
}

export function createProviderDirectory(providers: readonly ProviderSettings[]): ProviderDirectory {
  const discovered = new Map<string, Provider>();
  const byId = new Map(providers.map((settings) => [settings.id, settings]));

  const discover = async (settings: ProviderSettings) => {
    const client = await discovery(
      new URL(settings.issuer),
      settings.clientId,
      undefined,
      ClientSecretBasic(settings.clientSecret),
      { timeout: DISCOVERY_TIMEOUT_S, ...(onLoopback(settings.issuer) ? { execute: [allowInsecureRequests] } : {}) },
    );
    discovered.set(settings.id, { settings, client });
  };

  return {
    list: () => providers.filter(({ id }) => discovered.has(id)).map(({ id, name }) => ({ id, name })),
    isConfigured: (id) => byId.has(id),
    usable: (id) => discovered.get(id),
    async discoverMissing() {
      const missing = providers.filter(({ id }) => !discovered.has(id));
      const results = await Promise.allSettled(missing.map(discover));
      const failed = results.flatMap((result, i) =>
        result.status === 'rejected' ? [`${missing[i]?.id}: ${(result.reason as Error).message}`] : [],
      );
      if (failed.length > 0) throw new Error(`OpenID Connect discovery failed (${failed.join('; ')})`);
    },
  };
}
