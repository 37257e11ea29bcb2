import type { System } from '../seed-load';

/** One side of scenario 14, started and ready. */
export interface Running {
  system: System;
  url: string;
  pid: number;
  /** From spawning it to its first ready answer (ours: the launcher's Ready line; PocketBase: /api/health). */
  readyMs: number;
  /** Ours: what the launcher says it started (MongoDB protocol, S3, how many processes). */
  servers: Record<string, string>;
  /** Ours: where its database server is (the search benchmark writes its posts there). */
  databaseUrl?: string;
  stop(): Promise<void>;
}
