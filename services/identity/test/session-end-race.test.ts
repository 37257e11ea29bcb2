/**
 * Sessions end for good: a refresh racing the end of its session (logout, ending it from the list,
 * logging out everywhere) never leaves an access token working. Each round starts one refresh and
 * one end at once, either side a few milliseconds ahead; once the end has answered 204, every
 * access token the refresh answered must be refused within the revocation bound, and its refresh
 * token too. Run in a loop before landing (scripts/loop-test.sh): the race is the point.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { STALE_AFTER_MS } from '@cs/auth';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type IdentityHarness, startIdentity, TEST_PASSWORD, uniqueEmail } from './helpers';

interface Pair {
  token: string;
  refreshToken: string;
}

/**
 * The refresh starts ahead of the end by 0, 1, 2… REFRESH_AHEAD - 1 ms, then the end ahead of the
 * refresh by 0… END_AHEAD - 1 ms: from the refresh done before the end starts (in process, a
 * refresh takes about 10 ms) to the end done before the refresh reads, across the window between.
 */
const REFRESH_AHEAD = 24;
const END_AHEAD = 6;
const ROUNDS = REFRESH_AHEAD + END_AHEAD;

let h: IdentityHarness;
beforeAll(async () => {
  h = await startIdentity(__filename);
});
afterAll(async () => {
  await h.db.drop();
});

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

async function session(): Promise<Pair> {
  const email = uniqueEmail('race');
  return (await h.http.post('/api/auth/register').send({ email, password: TEST_PASSWORD }).expect(201)).body as Pair;
}

type Request = () => Promise<{ status: number; body: unknown }>;

/** Each way of ending a session: what it reads first (outside the race), then the request that races. */
const endings: Record<string, (pair: Pair) => Promise<Request>> = {
  logout: async (pair) => () => h.http.post('/api/auth/logout').send({ refreshToken: pair.refreshToken }),
  'ending it from the list': async (pair) => {
    const [own] = (await h.http.get('/api/auth/sessions').set(bearer(pair.token)).expect(200)).body as { id: string }[];
    return () => h.http.delete(`/api/auth/sessions/${own?.id}`).set(bearer(pair.token));
  },
  'logging out everywhere': async (pair) => () => h.http.delete('/api/auth/sessions').set(bearer(pair.token)),
};

/**
 * Asks with `token` every 100 ms, from now on, until it is refused; null once it is, within the
 * revocation bound from `endedAt`, or what was seen of it past that bound.
 */
async function refusedInTime(token: string, endedAt: number): Promise<{ token: string; lastStatus: number } | null> {
  for (;;) {
    const { status } = await h.http.get('/api/auth/me').set(bearer(token));
    if (status === 401 && Date.now() - endedAt <= STALE_AFTER_MS) return null;
    if (Date.now() - endedAt > STALE_AFTER_MS) return { token, lastStatus: status };
    await sleep(100);
  }
}

/** Starts `first` now and `second` `delayMs` later; both answers. */
async function race<A, B>(first: () => Promise<A>, second: () => Promise<B>, delayMs: number): Promise<[A, B]> {
  // A supertest request starts when it is awaited: Promise.resolve starts it now.
  const a = Promise.resolve(first());
  await sleep(delayMs);
  return Promise.all([a, second()]);
}

describe('a refresh racing the end of its session', () => {
  for (const [way, endingOf] of Object.entries(endings)) {
    it(`when a refresh races ${way}, then once the end answered 204 every access token the refresh answered is refused within the revocation bound, and its refresh token too`, async () => {
      // Each token a refresh answered is watched from the moment its end answered, beside the next rounds.
      const watched: ReturnType<typeof refusedInTime>[] = [];
      let refreshedRounds = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const pair = await session();
        const ending = await endingOf(pair);
        const refreshing = () => h.http.post('/api/auth/refresh').send({ refreshToken: pair.refreshToken });
        const [refreshed, ended] =
          round < REFRESH_AHEAD
            ? await race(refreshing, ending, round)
            : await race(ending, refreshing, round - REFRESH_AHEAD).then(([e, r]) => [r, e] as const);
        const endedAt = Date.now();
        expect(ended.status).toBe(204);
        expect([200, 401]).toContain(refreshed.status);
        if (refreshed.status !== 200) continue;
        refreshedRounds += 1;
        const next = refreshed.body as Pair;
        watched.push(refusedInTime(next.token, endedAt));
        // The session is over for good: the refresh token it answered refreshes nothing.
        await h.http.post('/api/auth/refresh').send({ refreshToken: next.refreshToken }).expect(401);
      }

      const lateOrAlive = (await Promise.all(watched)).filter((late) => late !== null);
      expect(lateOrAlive).toEqual([]);
      // A race in which no refresh ever got through would prove nothing about the tokens it answers.
      expect(refreshedRounds).toBeGreaterThan(0);
    }, 120_000);
  }
});
