import { type ConfigOf, env, hostSpec, jwtSpec, readEnvConfig } from '@cs/config';

export const configSpec = {
  ...jwtSpec,
  PORT: env.port(4001),
  ...hostSpec,
  MONGO_URL: env.url(),
  LOG_LEVEL: env.logLevel(),
  /** The contract's cost factor is 12; only tests lower it, and only through this key. */
  BCRYPT_COST: env.int(12, { min: 4, max: 15 }),
};

export type Config = ConfigOf<typeof configSpec>;

/** The only reader of process.env here (through readEnvConfig); tests pass their own source. */
export function readConfig(source: NodeJS.ProcessEnv = process.env): Config {
  return readEnvConfig(configSpec, source);
}
