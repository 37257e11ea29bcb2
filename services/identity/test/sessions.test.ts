import { setTimeout as sleep } from 'node:timers/promises';
import { signToken } from '@cs/auth';
import { type api, eventually, refusal, TEST_JWT_SECRET, waitForMail } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type IdentityHarness, startIdentity, TEST_PASSWORD, uniqueEmail } from './helpers';

const REFUSED = { error: 'Invalid or expired refresh token' };
let h: IdentityHarness;
/** A second replica on h's database. */
let replica: ReturnType<typeof api>;
const others: IdentityHarness[] = [];

beforeAll(async () => {
  h = await startIdentity(__filename);
  replica = await h.replica();
});
afterAll(async () => {
  await Promise.all([h, ...others].map((harness) => harness.db.drop()));
});

/** Identity with shorter session settings, on a database of its own. */
async function identityWith(config: Parameters<typeof startIdentity>[1]): Promise<IdentityHarness> {
  const harness = await startIdentity(__filename, config);
  others.push(harness);
  return harness;
}

interface Pair {
  token: string;
  refreshToken: string;
  expiresIn: number;
  /** In the answers of register and login, not of a refresh. */
  emailVerified?: boolean;
}

async function registerPair(harness = h, userAgent = 'jest'): Promise<Pair & { email: string }> {
  const email = uniqueEmail('session');
  const res = await harness.http
    .post('/api/auth/register')
    .set('User-Agent', userAgent)
    .send({ email, password: TEST_PASSWORD })
    .expect(201);
  return { ...(res.body as Pair), email };
}

async function login(email: string, harness = h, userAgent = 'jest'): Promise<Pair> {
  const res = await harness.http
    .post('/api/auth/login')
    .set('User-Agent', userAgent)
    .send({ email, password: TEST_PASSWORD })
    .expect(200);
  return res.body as Pair;
}

/** One session as the list gives it. */
interface Listed {
  id: string;
  userAgent: string | null;
  device: string;
  current: boolean;
}

const refresh = (refreshToken: string, http = h.http) => http.post('/api/auth/refresh').send({ refreshToken });
const bearer = (pair: Pair) => ({ Authorization: `Bearer ${pair.token}` });

describe('the pair a login answers', () => {
  it('when an account registers or logs in, then it gets an access token, an opaque refresh token and the lifetime', async () => {
    const registered = await registerPair();
    const loggedIn = await login(registered.email);

    for (const pair of [
      {
        token: registered.token,
        refreshToken: registered.refreshToken,
        expiresIn: registered.expiresIn,
        emailVerified: registered.emailVerified,
      },
      loggedIn,
    ]) {
      expect(pair).toEqual({
        token: expect.any(String),
        refreshToken: expect.any(String),
        expiresIn: 3600,
        emailVerified: false,
      });
      expect(pair.refreshToken).toMatch(/^[\w-]{104}$/);
    }
    expect(loggedIn.refreshToken).not.toBe(registered.refreshToken);
    await h.http.get('/api/auth/me').set(bearer(loggedIn)).expect(200);
  });
});

describe('POST /api/auth/refresh', () => {
  it('when a refresh token is presented, then the next pair comes back and the new refresh token works in turn', async () => {
    const first = await registerPair();

    const second = await refresh(first.refreshToken).expect(200);
    const third = await refresh(second.body.refreshToken).expect(200);

    expect(second.body).toEqual({ token: expect.any(String), refreshToken: expect.any(String), expiresIn: 3600 });
    expect(second.body.refreshToken).not.toBe(first.refreshToken);
    expect(third.body.refreshToken).not.toBe(second.body.refreshToken);
    await h.http.get('/api/auth/me').set(bearer(third.body)).expect(200);
  });

  it('when one refresh token is presented twice at once, on two replicas, then both get 200 and the same pair', async () => {
    const first = await registerPair();

    const [a, b] = await Promise.all([refresh(first.refreshToken), refresh(first.refreshToken, replica)]);

    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body).toEqual(b.body);
    // The one successor goes on working for both tabs.
    await refresh(a.body.refreshToken).expect(200);
  });

  it('when a spent refresh token is presented again within the grace interval, then it answers the same pair again', async () => {
    const first = await registerPair();
    const next = await refresh(first.refreshToken).expect(200);

    const again = await refresh(first.refreshToken).expect(200);

    expect(again.body).toEqual(next.body);
  });

  it('when a spent refresh token is presented after the grace interval, then 401, and every token of its session stops working, access tokens too', async () => {
    const short = await identityWith({ REFRESH_GRACE: 300 });
    const first = await registerPair(short);
    const next = await refresh(first.refreshToken, short.http).expect(200);
    const latest = await refresh(next.body.refreshToken, short.http).expect(200);
    await sleep(400);

    const stolen = await refresh(first.refreshToken, short.http);

    expect(stolen.status).toBe(401);
    expect(stolen.body).toEqual(REFUSED);
    // The thief's replay ended the session: the rightful holder's latest token is refused too.
    await refresh(latest.body.refreshToken, short.http).expect(401);
    // And so are the access tokens the session was issued, within a poll of the revocation feed.
    for (const token of [first.token, next.body.token, latest.body.token]) {
      await eventually(
        'an access token of the stolen session refused',
        async () => (await short.http.get('/api/auth/me').set('Authorization', `Bearer ${token}`)).status,
        (status) => status === 401,
      );
    }
  });

  it('when a session has not been refreshed for its idle lifetime, then its refresh token is refused', async () => {
    const idle = await identityWith({ SESSION_IDLE_TTL: 600 });
    const first = await registerPair(idle);
    const kept = await refresh(first.refreshToken, idle.http).expect(200);
    await sleep(700);

    expect((await refresh(kept.body.refreshToken, idle.http)).body).toEqual(REFUSED);
  });

  it('when a session is refreshed within its idle lifetime, then it lives on past it', async () => {
    const idle = await identityWith({ SESSION_IDLE_TTL: 1_000 });
    const first = await registerPair(idle);
    await sleep(600);
    const kept = await refresh(first.refreshToken, idle.http).expect(200);
    await sleep(600);

    // 1.2 s after the login, 0.6 s after the refresh.
    await refresh(kept.body.refreshToken, idle.http).expect(200);
  });

  it('when a session reaches its absolute lifetime, then refreshing it is refused however often it was refreshed', async () => {
    const aging = await identityWith({ SESSION_MAX_AGE: 1_000 });
    let pair = (await registerPair(aging)) as Pair;
    const started = Date.now();
    while (Date.now() - started < 700) {
      pair = (await refresh(pair.refreshToken, aging.http).expect(200)).body as Pair;
      await sleep(100);
    }
    await sleep(1_000 - (Date.now() - started) + 100);

    await refresh(pair.refreshToken, aging.http).expect(401);
  });

  it('when a refresh token is altered to name another session, or its signature is cut, then 401, and the real one still works', async () => {
    const victim = await registerPair();
    const attacker = await registerPair();
    const bytes = Buffer.from(attacker.refreshToken, 'base64url');
    // The first 12 bytes name the session: the attacker's token, made to name the victim's.
    Buffer.from(victim.refreshToken, 'base64url').copy(bytes, 0, 0, 12);
    const forged = bytes.toString('base64url');
    const cut = `${victim.refreshToken.slice(0, -2)}AA`;

    expect((await refresh(forged)).body).toEqual(REFUSED);
    expect((await refresh(cut)).body).toEqual(REFUSED);
    await refresh(victim.refreshToken).expect(200);
  });

  it('when the refresh token is unknown, missing or not a string, then 401 or 400 with a message', async () => {
    expect((await refresh('x'.repeat(104))).status).toBe(401);
    expect((await h.http.post('/api/auth/refresh').send({})).status).toBe(400);
    expect((await h.http.post('/api/auth/refresh').send({ refreshToken: 42 })).body).toEqual(
      refusal('refreshToken must be a string'),
    );
  });
});

describe('ending sessions', () => {
  it('when a session logs out, then its refresh token is refused, and logging out again is still 204', async () => {
    const pair = await registerPair();

    await h.http.post('/api/auth/logout').send({ refreshToken: pair.refreshToken }).expect(204);

    expect((await refresh(pair.refreshToken)).body).toEqual(REFUSED);
    await h.http.post('/api/auth/logout').send({ refreshToken: pair.refreshToken }).expect(204);
    await h.http
      .post('/api/auth/logout')
      .send({ refreshToken: 'y'.repeat(104) })
      .expect(204);
  });

  it('when the caller lists its sessions, then it sees its live ones, newest first, with their User-Agent', async () => {
    const first = await registerPair(h, 'desktop browser');
    await sleep(5);
    const second = await login(first.email, h, 'phone app');
    await h.http
      .post('/api/auth/logout')
      .send({ refreshToken: (await login(first.email)).refreshToken })
      .expect(204);

    const res = await h.http.get('/api/auth/sessions').set(bearer(second)).expect(200);

    expect(res.body).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        createdAt: expect.any(String),
        lastUsedAt: expect.any(String),
        userAgent: 'phone app',
        device: 'Unknown device',
        current: true,
      },
      {
        id: expect.any(String),
        createdAt: expect.any(String),
        lastUsedAt: expect.any(String),
        userAgent: 'desktop browser',
        device: 'Unknown device',
        current: false,
      },
    ]);
  });

  it('when sessions logged in from browsers, then the list names each one’s device in words beside its User-Agent', async () => {
    const chrome =
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
    const safari =
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
    const first = await registerPair(h, chrome);
    const second = await login(first.email, h, safari);

    const listed = (await h.http.get('/api/auth/sessions').set(bearer(second)).expect(200)).body as Listed[];

    expect(listed.map(({ userAgent, device }) => ({ userAgent, device }))).toEqual([
      { userAgent: safari, device: 'Safari on iPhone' },
      { userAgent: chrome, device: 'Chrome on Linux' },
    ]);
  });

  it('when the caller ends one of its sessions, then that one stops refreshing and the other goes on', async () => {
    const desktop = await registerPair(h, 'desktop');
    const phone = await login(desktop.email, h, 'phone');
    const listed = (await h.http.get('/api/auth/sessions').set(bearer(phone)).expect(200)).body as {
      id: string;
      userAgent: string;
    }[];
    const desktopSession = listed.find((s) => s.userAgent === 'desktop')?.id ?? '';

    await h.http.delete(`/api/auth/sessions/${desktopSession}`).set(bearer(phone)).expect(204);

    await refresh(desktop.refreshToken).expect(401);
    await refresh(phone.refreshToken).expect(200);
    await h.http.delete(`/api/auth/sessions/${desktopSession}`).set(bearer(phone)).expect(404);
  });

  it('when the caller names another user’s session, an unknown one or not an id, then 404, 404 and 400, and nothing ends', async () => {
    const mine = await registerPair();
    const theirs = await registerPair();
    const [theirSession] = (await h.http.get('/api/auth/sessions').set(bearer(theirs)).expect(200)).body as {
      id: string;
    }[];

    expect((await h.http.delete(`/api/auth/sessions/${theirSession?.id}`).set(bearer(mine))).body).toEqual({
      error: 'Session not found',
    });
    await h.http
      .delete(`/api/auth/sessions/${'a'.repeat(24)}`)
      .set(bearer(mine))
      .expect(404);
    await h.http.delete('/api/auth/sessions/not-an-id').set(bearer(mine)).expect(400);
    await refresh(theirs.refreshToken).expect(200);
  });

  it('when the caller logs out everywhere, then every one of its sessions stops refreshing, and no one else’s', async () => {
    const one = await registerPair();
    const two = await login(one.email);
    const stranger = await registerPair();

    await h.http.delete('/api/auth/sessions').set(bearer(one)).expect(204);

    await refresh(one.refreshToken).expect(401);
    await refresh(two.refreshToken).expect(401);
    await refresh(stranger.refreshToken).expect(200);
    // The access token that asked is revoked with them (revocation.test.ts has the rest).
    await eventually(
      'the token that logged out everywhere refused',
      async () => (await h.http.get('/api/auth/sessions').set(bearer(one))).status,
      (status) => status === 401,
    );
  });

  it('when the password is changed, then every other session ends and the answer is a working new one', async () => {
    const other = await registerPair();
    const current = await login(other.email);

    const changed = await h.http
      .put('/api/auth/password')
      .set(bearer(current))
      .send({ currentPassword: TEST_PASSWORD, newPassword: 'another good secret' })
      .expect(200);

    await refresh(other.refreshToken).expect(401);
    await refresh(current.refreshToken).expect(401);
    await refresh(changed.body.refreshToken).expect(200);
  });

  it('when the password is reset by e-mail, then every session ends', async () => {
    const pair = await registerPair();
    const since = new Date();
    await h.http.post('/api/auth/password-reset').send({ email: pair.email }).expect(202);
    const mail = await waitForMail(pair.email, { since, subject: 'Set a new password' });
    const token = decodeURIComponent(/reset-password\?token=([^\s"<&]+)/.exec(mail.text)?.[1] ?? '');

    await h.http
      .post('/api/auth/password-reset/confirm')
      .send({ token, newPassword: 'a brand new secret' })
      .expect(204);

    await refresh(pair.refreshToken).expect(401);
  });

  it('when the account is deleted, then its sessions end', async () => {
    const pair = await registerPair();

    await h.http.delete('/api/auth/account').set(bearer(pair)).send({ password: TEST_PASSWORD }).expect(204);

    await refresh(pair.refreshToken).expect(401);
  });
});

describe('GET /api/auth/sessions: which one is the caller’s', () => {
  /** The ids of the sessions the caller's list marks current, and of every one it lists. */
  const currentOf = async (headers: Record<string, string>) => {
    const listed = (await h.http.get('/api/auth/sessions').set(headers).expect(200)).body as Listed[];
    return { current: listed.filter((s) => s.current).map((s) => s.id), all: listed.map((s) => s.id) };
  };
  const userIdOf = (pair: Pair) =>
    (JSON.parse(Buffer.from(pair.token.split('.')[1] ?? '', 'base64url').toString()) as { id: string }).id;

  it('when one user has logged in twice, then each login’s access token marks its own session current and the other not', async () => {
    const first = await registerPair(h, 'laptop');
    const second = await login(first.email, h, 'phone');

    const seenByFirst = await currentOf(bearer(first));
    const seenBySecond = await currentOf(bearer(second));

    expect(seenByFirst.all).toHaveLength(2);
    expect(seenByFirst.current).toHaveLength(1);
    expect(seenBySecond.current).toHaveLength(1);
    expect(seenBySecond.current).not.toEqual(seenByFirst.current);
    // Newest first: the phone's session is the first listed, the laptop's the second.
    expect([seenBySecond.current[0], seenByFirst.current[0]]).toEqual(seenBySecond.all);
  });

  it('when only the refresh token (cookie mode) names the session, then that session is current', async () => {
    const first = await registerPair(h, 'laptop');
    const second = await login(first.email, h, 'phone');
    // A valid access token of the user that no session was issued: its second is one no pair took.
    const stranger = signToken(
      userIdOf(first),
      { secret: TEST_JWT_SECRET, expiresIn: '1h' },
      Math.floor(Date.now() / 1000) - 600,
    );
    const asked = { Authorization: `Bearer ${stranger}`, 'X-Refresh-Token': 'cookie' };

    const byCookie = await currentOf({ ...asked, Cookie: `cs_refresh=${second.refreshToken}` });
    const byNothing = await currentOf(asked);

    expect(byCookie.current).toEqual([byCookie.all[0]]);
    expect(byNothing).toEqual({ current: [], all: byCookie.all });
  });

  it('when a session has refreshed, then its new access token still marks the same session current', async () => {
    const first = await registerPair(h, 'laptop');
    await login(first.email, h, 'phone');
    const before = await currentOf(bearer(first));

    const next = (await refresh(first.refreshToken).expect(200)).body as Pair;
    const after = await currentOf(bearer(next));

    expect(next.token).not.toBe(first.token);
    expect(after.current).toEqual(before.current);
    expect(after.current).toEqual([after.all[1]]);
  });
});

describe('a deletion finished by the outbox', () => {
  it('when a deletion was recorded and its request stopped before the account was deleted, then the outbox removes its sessions and refresh tokens', async () => {
    const pair = await registerPair();
    const userId = (await h.http.get('/api/auth/me').set(bearer(pair)).expect(200)).body._id as string;
    await refresh(pair.refreshToken).expect(200);

    // As a request that died right after recording the deletion.
    await h.deletions.record(userId);
    const kept = (collection: string) => h.db.connection.collection(collection).countDocuments({ userId });
    // The outbox's poll, as the service runs it, until the entry has been handled once.
    const stop = h.deletions.start(20);
    try {
      const tried = () => h.db.connection.collection('account_deletions').findOne({ _id: userId as never });
      await eventually('the deletion handled once', tried, (entry) => Boolean(entry?.lastError) || entry === null);
    } finally {
      await stop();
    }

    await refresh(pair.refreshToken).expect(401);
    expect([await kept('sessions'), await kept('session_tokens')]).toEqual([0, 0]);
  });
});

describe('GET /api/auth/me', () => {
  it('when the caller asks, then it gets its id, address and creation time, and never its password', async () => {
    const pair = await registerPair();

    const res = await h.http.get('/api/auth/me').set(bearer(pair)).expect(200);

    expect(res.body).toEqual({
      _id: expect.stringMatching(/^[0-9a-f]{24}$/),
      email: pair.email,
      displayName: null,
      emailVerified: false,
      createdAt: expect.any(String),
    });
  });

  it('when the caller’s account is gone, then 401', async () => {
    const pair = await registerPair();
    await h.http.delete('/api/auth/account').set(bearer(pair)).send({ password: TEST_PASSWORD }).expect(204);

    await h.http.get('/api/auth/me').set(bearer(pair)).expect(401);
  });
});
