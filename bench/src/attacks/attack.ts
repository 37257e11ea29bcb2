/** What an attack is: its paced streams, or an attacker of its own, and what it needs. */
import type { PacedResult, PacedSpec, PacedStream } from '../paced-spec';
import type { UnreadStreamsResult, UnreadStreamsSpec } from '../unread-streams';

/** What an attacker did: its requests' figures (paced-load's), and a sentence of anything else. */
export interface AttackerRun {
  result: PacedResult | undefined;
  detail?: string;
}

export interface Attack {
  name: string;
  /** What it does, in the report. */
  what: string;
  /** Its paced requests, checked against the limits; unless `run` attacks otherwise. */
  streams: PacedStream[];
  /** The addresses `run` uses, for the check that no two attacks share one. */
  addresses?: string[];
  /** How long it lasts, when not as long as the bystander's measure (a bulk import lasts until done). */
  durationS?: number;
  /** Work before it, not measured (the bus seeded). */
  prepare?: () => Promise<void>;
  /** The attacker, instead of the paced streams. */
  run?: (durationS: number, seed: number) => Promise<AttackerRun>;
  /** Once it is over: a sentence of what it did besides its requests. */
  after?: (attacker: AttackerRun) => Promise<string>;
}

/** What the new attacks (5 to 10) need: accounts, a note, the system's addresses. */
export interface AttackContext {
  flipPath: string;
  flipHeaders: Record<string, string>;
  tagTotals: number[];
  gateway: string;
  streamerHeaders: Record<string, string>;
  /** The streamer's note updated with big bodies beside its unread streams, and those the bus is seeded with (one a seeding address). */
  bigNotePath: string;
  busNotePaths: string[];
  logoutHeaders: Record<string, string>;
  publisherHeaders: Record<string, string>;
  /** How many entries identity's revocation log holds now. */
  revocationEntries: () => Promise<number>;
  runPaced: (spec: PacedSpec) => Promise<Record<string, PacedResult>>;
  runUnread: (spec: UnreadStreamsSpec) => Promise<UnreadStreamsResult>;
}
