/** What scenario 11 is given, and the shape of what it reports. */
import type { SystemOptions } from '@cs/devstack';
import type { PacedResult } from '../paced-spec';
import type { PublishRate } from './bulk-import';
import type { BystanderRequest } from './settings';

export interface BystanderFigures {
  p50Without: number;
  p50With: number;
  ratio: number;
  p99Without: number;
  p99With: number;
  sent: number;
  succeededPct: number;
}

export interface AttackFigures {
  name: string;
  what: string;
  attacker: { rps: number; sent: number; p50: number; statuses: Record<string, number> };
  bystander: Record<BystanderRequest, BystanderFigures>;
  bystanderSucceededPct: number;
  /** What else the attack did or found (statuses per kind of stream, the revocation log, posts/s). */
  detail?: string;
  /** The one process's resident memory (VmRSS, sampled every 100 ms from the attack's start to its settle's end), in MB. */
  memory: { beforeMb: number; peakMb: number; afterMb: number; hwmMb: number };
  /** Whether the one process was still there and ready after it. */
  survived: boolean;
  goalMet: boolean;
}

/** The import with the default settings, and the same import with the limits off. */
export interface BulkImportFigures {
  defaults: PublishRate;
  limitsOff: PublishRate;
  ratio: number;
  goalRatio: number;
  goalMet: boolean;
}

export interface AttacksReport {
  /** When the import ran: its rate against the same import, limits off, on a system of its own. */
  bulkImport?: BulkImportFigures;
  posts: number;
  measureS: number;
  limits: { rateLimit: number; authRateLimit: number; windowS: number };
  bystanderRates: Record<BystanderRequest, number>;
  /** Whether the bystander's logins present the device token its first login was answered (X-Device-Token). */
  bystanderDevice: boolean;
  without: Record<string, PacedResult>;
  attacks: AttackFigures[];
  goal: string;
}

export interface AttackOptions {
  dataDir: string;
  mongoUrl: string;
  storage: SystemOptions['storage'];
  jwtSecret: string;
  dbPrefix: string;
  bcryptCost: string;
  /** The bench's built files (paced-load.js), and the node to run them with. */
  dist: string;
  node: string;
  /** Called with the system once started, for the bench to stop it on Ctrl-C. */
  own(stoppable: { stop(): Promise<unknown> }): void;
  log(line: string): void;
}
