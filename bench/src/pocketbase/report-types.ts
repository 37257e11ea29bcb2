/** What scenario 14 is given, and the shape of what it reports. */

import type { DatabaseSetting } from '../database-settings';
import type { LoadSummary } from '../rounds';
import type { System } from '../seed-load';

export interface PocketBaseOptions {
  dataDir: string;
  dist: string;
  node: string;
  rounds: number;
  durationS: number;
  connections: number;
  posts: number;
  /** Restarts of each system for the time to ready. */
  starts: number;
  bcryptCost: string;
  own(stoppable: { stop(): Promise<unknown> }): void;
  log(line: string): void;
}

export interface Memory {
  rssMb: number;
  pssMb: number;
  processes: number;
}

export interface MemoryOfSide extends Memory {
  /** By kind: npm, sh, launcher, node, postgres, ferretdb, versitygw, mailpit, redis-server. */
  byName: Record<string, Memory>;
}

/** Where one side's CPU went over its measured rounds: ms per request, by kind of process. */
export interface CpuPerRequest {
  /** node, ferretdb, postgres…, or pocketbase; the load generator's own apart. */
  msPerRequest: Record<string, number>;
  /** The load generator's, in its own process. */
  loadGeneratorMs: number;
  /** Cores the machine kept busy on average over the rounds (every process, anyone's). */
  machineBusyCores: number;
}

export interface SideBySide {
  ours: LoadSummary;
  pocketbase: LoadSummary;
  /** Absent from runs before it was measured. */
  cpu?: Record<System, CpuPerRequest>;
  /** Ours over PocketBase: requests a second (median of the paired rounds), p50 and p99 (of the medians). */
  ratio: number;
  p50Ratio: number;
  p99Ratio: number;
}

export interface PocketBaseReport {
  pocketbase: string;
  ours: string;
  servers: Record<string, string>;
  posts: number;
  users: number;
  bcryptCost: number;
  connections: number;
  rounds: number;
  durationS: number;
  byId: SideBySide;
  create: SideBySide;
  /** The create again under other PostgreSQL settings (database-settings.ts); absent on SQLite and from older runs. */
  createUnder?: Array<{ setting: DatabaseSetting; create: SideBySide }>;
  /** Absent from runs before it was measured. */
  publish?: {
    count: number;
    inFlight: number;
    ours: { postsPerS: number; p50: number; rounds: number[]; failures: number };
    pocketbase: { postsPerS: number; p50: number; rounds: number[]; failures: number };
    ratio: number;
  };
  seeding: {
    inFlight: number;
    ours: { postsPerS: number; p50: number; rounds: number[]; failures: number };
    pocketbase: { postsPerS: number; p50: number; rounds: number[]; failures: number };
    ratio: number;
  };
  list: SideBySide & { paths: { ours: string; pocketbase: string } };
  login: SideBySide;
  listWhilePublishing: SideBySide & { everyMs: number; published: { ours: number; pocketbase: number } };
  memory: {
    afterStart: { ours: MemoryOfSide; pocketbase: MemoryOfSide; rssRatio: number; pssRatio: number };
    afterRestart: { ours: MemoryOfSide; pocketbase: MemoryOfSide; rssRatio: number; pssRatio: number };
  };
  startToReady: {
    ours: { firstMs: number; restartsMs: number[]; medianMs: number };
    pocketbase: { firstMs: number; restartsMs: number[]; medianMs: number };
    ratio: number;
  };
  goals: Record<string, string>;
}
