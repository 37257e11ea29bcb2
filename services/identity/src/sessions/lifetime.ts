/** When a session is live: not ended, refreshed within its idle lifetime, younger than its maximum age. */
import type { SessionEndRecord, SessionRecord } from './model';

export interface SessionSettings {
  /** Sessions end this long after their last refresh. */
  idleMs: number;
  /** Sessions end this long after their login, however often refreshed. */
  maxAgeMs: number;
  /** How long a spent refresh token still answers its successor pair. */
  graceMs: number;
}

/** Whether `session` is live at `at`; `end`: its end record, when it was read. */
export const isLive = (
  session: SessionRecord | null,
  at: number,
  settings: Pick<SessionSettings, 'idleMs' | 'maxAgeMs'>,
  end: SessionEndRecord | null = null,
): session is SessionRecord =>
  session !== null &&
  end === null &&
  session.endedAt === null &&
  at - session.lastUsedAt.getTime() < settings.idleMs &&
  at - session.createdAt.getTime() < settings.maxAgeMs;
