import { type ConfigOf, env, jwtSpec, loadConfig, loadDotEnv } from '@cs/config';

export const configSpec = {
  ...jwtSpec,
  PORT: env.port(4002),
  MONGO_URL: env.url(),
  LOG_LEVEL: env.oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'silent'], 'info'),
};

export type Config = ConfigOf<typeof configSpec>;

/** The only reader of process.env in this service. */
export function readConfig(source: NodeJS.ProcessEnv = process.env): Config {
  if (source === process.env) loadDotEnv();
  return loadConfig(configSpec, source);
}
