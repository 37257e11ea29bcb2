import { type TokenVerifier, verifierOf } from '@cs/auth';
import { overTheNetwork, type ServiceReach } from '@cs/lifecycle';
import type { Logger } from '@cs/log';
import type { Connection } from '@cs/mongo';
import { connectDatabase } from './database';
import type { BaseConfig, Built, ConnectionOf, PartDefinition, TokensOf } from './part';

/** What a process holds for the parts it runs together, which each part uses and leaves to it. */
export interface ProcessShares {
  /** The part's database, on a connection the process holds and closes. */
  database?: Connection;
  /** The process's one token verifier, which it stops. */
  tokens?: TokenVerifier;
  /** How the process's parts reach one another; over the network when not given. */
  reach?: ServiceReach;
}

/** A part built and ready to serve, not yet listening: its app, and how it stops. */
export interface StartedPart<C extends BaseConfig = BaseConfig> extends Omit<Built, 'stops' | 'onClose'> {
  name: string;
  config: C;
  logger: Logger;
  keepAliveTimeoutMs: number;
  /** Stops what the part started, then its verifier and database connection, when they are its own. */
  close(): Promise<void>;
}

/** The keys of a part that checks tokens. */
interface ChecksTokens {
  IDENTITY_URL: string;
  JWT_SECRET: string;
}

function checksTokens(config: BaseConfig): config is BaseConfig & ChecksTokens {
  const { IDENTITY_URL, JWT_SECRET } = config as Partial<ChecksTokens>;
  return typeof IDENTITY_URL === 'string' && typeof JWT_SECRET === 'string';
}

/**
 * Connects a part to its database (when it has one), gives it a verifier (when it checks tokens:
 * the process's, or one of its own that follows identity's log) and builds its app.
 */
export async function startPart<C extends BaseConfig>(
  { name, build, keepAliveTimeoutMs }: PartDefinition<C>,
  config: C,
  logger: Logger,
  shares: ProcessShares = {},
): Promise<StartedPart<C>> {
  const reach = shares.reach ?? overTheNetwork;
  const connection =
    shares.database ?? (config.MONGO_URL === undefined ? undefined : await connectDatabase(config.MONGO_URL, logger));
  const tokens = checksTokens(config)
    ? verifierOf({
        shared: shares.tokens,
        identityUrl: config.IDENTITY_URL,
        secret: config.JWT_SECRET,
        logger,
        fetch: reach.fetch,
      })
    : undefined;
  const closeOwn = async () => {
    tokens?.stop();
    if (shares.database === undefined) await connection?.close();
  };
  let built: Built;
  try {
    built = await build({
      config,
      connection: connection as ConnectionOf<C>,
      logger,
      tokens: tokens?.verifier as TokensOf<C>,
      reach,
    });
  } catch (err) {
    await closeOwn();
    throw err;
  }
  const { stops = [], onClose, ...served } = built;
  return {
    name,
    config,
    logger,
    keepAliveTimeoutMs,
    ...served,
    close: async () => {
      await Promise.all(stops.map((stop) => stop()));
      await onClose?.();
      await closeOwn();
    },
  };
}
