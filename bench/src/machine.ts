/** What a report says of the machine it was measured on. */
import { cpus, totalmem } from 'node:os';
import { round } from './stats';

/** Its cores, CPU, memory and Node, and the servers the run's systems used. */
export function machineOf(mongo: string | undefined, storage: string | undefined) {
  return {
    cores: cpus().length,
    cpu: cpus()[0]?.model,
    memoryGb: round(totalmem() / 2 ** 30),
    node: process.version,
    mongo,
    storage,
  };
}
