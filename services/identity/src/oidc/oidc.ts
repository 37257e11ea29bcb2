/**
 * Sign-in with OpenID Connect providers, put together: what app.ts wires in, in one place.
 */
import { repeatEvery } from '@cs/lifecycle';
import type { Logger } from '@cs/log';
import type { Turns } from '@cs/mongo';
import type { Connection } from 'mongoose';
import type { UserModel } from '../accounts/model';
import type { Sessions } from '../sessions/sessions';
import { createAccountAccess } from './account-access';
import { createAccountLinks } from './account-links';
import { createFlows } from './flows';
import { createIdentities } from './identities';
import { createLoginCodes } from './login-codes';
import { flowModel, flowUseModel, identityModel } from './model';
import { createProviderDirectory } from './provider-directory';
import type { ProviderSettings } from './provider-settings';
import { createSignIn } from './sign-in';

export interface OidcSettings {
  providers: readonly ProviderSettings[];
  publicUrl: string;
  /** FRONTEND_ORIGIN and WEB_URL: where a sign-in may end. */
  allowedOrigins: readonly string[];
}

export async function createOidc(
  {
    connection,
    users,
    sessions,
    turns,
    logger,
  }: {
    connection: Connection;
    users: UserModel;
    sessions: Sessions;
    turns: Turns;
    logger: Logger;
  },
  { providers, publicUrl, allowedOrigins }: OidcSettings,
) {
  const models = [flowModel(connection), flowUseModel(connection), identityModel(connection)] as const;
  // The unique (issuer, sub) must exist before the first sign-in.
  await Promise.all(models.map((model) => model.init()));
  const [flowRecords, flowUses, identityRecords] = models;
  const directory = createProviderDirectory(providers);
  const flows = createFlows({ flows: flowRecords, uses: flowUses });
  const codes = createLoginCodes(connection);
  const identities = createIdentities(identityRecords);
  const links = createAccountLinks({ users, identities, sessions, turns });
  const signIn = createSignIn({ directory, flows, codes, links, publicUrl, allowedOrigins, logger });
  const access = createAccountAccess({ users, sessions, codes, identities });
  return {
    routes: { directory, signIn, access },
    directory,
    /** What a deleted account leaves here: its identities. */
    forget: (userId: string) => identities.forget(userId),
    prune: async () => (await flows.prune()) + (await codes.prune()),
    /**
     * Discovers every provider now, and every `intervalMs` those that have not answered yet (a
     * failure goes to `onError`, and the start goes on); returns the stop.
     */
    discover(intervalMs: number, onError: (err: unknown) => void): () => Promise<void> {
      const first = directory.discoverMissing().catch(onError);
      const stop = repeatEvery(intervalMs, () => directory.discoverMissing(), onError);
      return async () => {
        await stop();
        await first;
      };
    },
  };
}

export type Oidc = Awaited<ReturnType<typeof createOidc>>;
