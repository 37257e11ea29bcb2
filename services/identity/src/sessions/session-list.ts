/** The list of a user's live sessions, the caller's own marked (GET /api/users/me/sessions). */
import { trusted } from '@cs/mongo';
import { deviceName } from './device-name';
import { isLive, type SessionSettings } from './lifetime';
import type { RefreshTokenModel, RefreshTokenRecord, SessionModel, SessionRecord } from './model';
import type { RefreshTokens } from './refresh-tokens';

export interface SessionSummary {
  id: string;
  createdAt: Date;
  lastUsedAt: Date;
  userAgent: string | null;
  /** The User-Agent in words (device-name.ts). */
  device: string;
  /** Whether it is the caller's own session: the one whose token asks. */
  current: boolean;
}

/** What a request presents that names its own session (list). */
export interface CallerTokens {
  /** Its refresh token, when it sent one (cookie mode's cookie). */
  refreshToken?: string | undefined;
  /** Its access token's `iat` (already verified, of the listed user). */
  issuedAt?: number | undefined;
}

/** What the list reads, at the time `at`. */
interface ListSources {
  sessions: SessionModel;
  refreshTokens: RefreshTokenModel;
  keys: Pick<RefreshTokens, 'open'>;
  settings: Pick<SessionSettings, 'maxAgeMs' | 'idleMs'>;
  at: number;
}

/**
 * The caller's live sessions, newest first, the one `caller` presents the tokens of marked
 * `current`. Its refresh token names its session (no read); otherwise its access token's
 * second does, through the record of the pair it was issued with (the unique `(userId, iat)`),
 * read at the same time as the list: one more read, no longer wait. A refresh token that names
 * none of the listed (another user's, an ended session's) falls back to the access token.
 */
export async function listSessions(
  { sessions, refreshTokens, keys, settings, at }: ListSources,
  userId: string,
  caller: CallerTokens,
): Promise<SessionSummary[]> {
  const claims = caller.refreshToken === undefined ? null : keys.open(caller.refreshToken);
  const named = claims?.userId === userId ? claims.sessionId : undefined;
  const issuedWith = async (): Promise<string | undefined> => {
    if (caller.issuedAt === undefined) return undefined;
    const record = await refreshTokens
      .findOne({ userId, iat: caller.issuedAt }, { sessionId: 1 })
      .lean<Pick<RefreshTokenRecord, 'sessionId'>>();
    return record?.sessionId;
  };
  const [found, issuer] = await Promise.all([
    sessions
      .find({ userId, endedAt: null, createdAt: trusted({ $gt: new Date(at - settings.maxAgeMs) }) })
      .sort({ createdAt: -1, _id: -1 })
      .lean<SessionRecord[]>(),
    named === undefined ? issuedWith() : undefined,
  ]);
  const listed = found.filter((s) => isLive(s, at, settings));
  let current = named === undefined ? issuer : named;
  if (named !== undefined && !listed.some((s) => s._id === named)) current = await issuedWith();
  return listed.map((s) => ({
    id: s._id,
    createdAt: s.createdAt,
    lastUsedAt: s.lastUsedAt,
    userAgent: s.userAgent,
    device: deviceName(s.userAgent),
    current: s._id === current,
  }));
}
