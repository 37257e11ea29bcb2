export { configOrExit } from '@cs/config';
export { connectDatabase } from './database';
export type { BaseConfig, Built, ConnectionOf, PartDefinition, PartDeps, TokensOf } from './part';
export { runPart } from './run-part';
export { type ProcessShares, type StartedPart, startPart } from './start-part';
