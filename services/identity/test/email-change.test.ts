/**
 * E-mail change (email/email-change.ts) against the real Mailpit: the request's mails, its
 * confirmation, and what the change ends: the old address's logins, reset and verification links,
 * and every other session.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, mailsTo, refusal, waitForMail } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type IdentityHarness, registered, startIdentity, TEST_PASSWORD, uniqueEmail } from './helpers';

const INVALID = { error: 'Invalid or expired link to change the address: ask for the change again' };
const ACCEPTED = { message: 'A link to confirm the new address is on its way to it, if it can be used' };
const CHANGE_LINK = /http:\/\/localhost:3000\/#\/confirm-email-change\?token=([0-9a-f]{24}\.[\w-]{43})/;
const VERIFY_LINK = /#\/verify-email\?token=([0-9a-f]{24}\.[\w-]{43})/;

let h: IdentityHarness;
const others: IdentityHarness[] = [];

beforeAll(async () => {
  expect(process.env.SMTP_URL).toBeTruthy(); // the test kit runs a real SMTP server
  h = await startIdentity(__filename, { EMAIL_RESEND_INTERVAL: 0 });
});
afterAll(async () => {
  await Promise.all([h, ...others].map((harness) => harness.db.drop()));
});

async function identityWith(config: Parameters<typeof startIdentity>[1]): Promise<IdentityHarness> {
  const harness = await startIdentity(__filename, config);
  others.push(harness);
  return harness;
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

const requestChange = (token: string, newEmail: string, password = TEST_PASSWORD, harness = h) =>
  harness.http.post('/api/auth/email-change').set(bearer(token)).send({ newEmail, password });

/** Asks for the change and reads the token out of the link mailed to the new address. */
async function changeLink(token: string, newEmail: string): Promise<string> {
  const since = new Date();
  await requestChange(token, newEmail).expect(202);
  const mail = await waitForMail(newEmail, { since });
  const link = CHANGE_LINK.exec(mail.text);
  expect(link).not.toBeNull();
  return link?.[1] ?? '';
}

const confirm = (token: string, headers: Record<string, string> = {}) =>
  h.http.post('/api/auth/email-change/confirm').set(headers).send({ token });

const login = (email: string) => h.http.post('/api/auth/login').send({ email, password: TEST_PASSWORD });
const me = (token: string) => h.http.get('/api/auth/me').set(bearer(token));

describe('POST /api/auth/email-change', () => {
  it('when the new address is free, then 202, a link to it, and a notice with no link to the old one', async () => {
    const { email, token } = await registered(h, 'change');
    const newEmail = uniqueEmail('change-new');
    await waitForMail(email); // its registration's link, before the change's mails are counted
    const since = new Date();

    const res = await requestChange(token, `  ${newEmail.toUpperCase()} `);

    expect(res.status).toBe(202);
    expect(res.body).toEqual(ACCEPTED);
    const link = await waitForMail(newEmail, { since });
    expect(link.subject).toBe('Confirm your new e-mail address');
    expect(link.text).toMatch(CHANGE_LINK);
    const notice = await waitForMail(email, { since });
    expect(notice.subject).toBe('Your e-mail address is being changed');
    expect(notice.text).not.toMatch(/token=|https?:/);
    expect(notice.html).not.toMatch(/token=|href/);
  });

  it('when the new address has an account, then the very same 202, and its owner gets a notice with no link', async () => {
    const { token } = await registered(h, 'taker');
    const free = uniqueEmail('free');
    const { email: taken } = await registered(h, 'taken');
    await waitForMail(taken); // its registration's link, before the change's mails are counted
    const since = new Date();

    const toFree = await requestChange(token, free);
    const toTaken = await requestChange(token, taken);

    expect(toTaken.status).toBe(202);
    expect(toTaken.text).toBe(toFree.text);
    expect(toTaken.headers['content-type']).toBe(toFree.headers['content-type']);
    const notice = await waitForMail(taken, { since });
    expect(notice.subject).toBe('This address has an account already');
    expect(notice.text).not.toMatch(/token=|https?:/);
  });

  it('when the password is wrong, then 401 as a password change answers, and no mail goes', async () => {
    const { email, token } = await registered(h, 'wrong');
    const newEmail = uniqueEmail('wrong-new');
    await waitForMail(email); // its registration's link, before the change's mails are counted
    const before = await mailsTo(email);

    const res = await requestChange(token, newEmail, 'not the password');

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Invalid credentials' });
    await sleep(300);
    expect(await mailsTo(newEmail)).toBe(0);
    expect(await mailsTo(email)).toBe(before);
  });

  it('when the new address is the account’s own, then 400', async () => {
    const { email, token } = await registered(h, 'same');
    const res = await requestChange(token, email.toUpperCase());
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'That is the account’s address already' });
  });

  it('when a field is missing, then 400 saying which', async () => {
    const { token } = await registered(h, 'missing');
    const res = await h.http.post('/api/auth/email-change').set(bearer(token)).send({ newEmail: uniqueEmail() });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(refusal('newEmail and password are required'));
  });

  it('when the account has no password, then a fresh sign-in is its proof', async () => {
    const { token, userId } = await registered(h, 'passwordless');
    await h.users.updateOne({ _id: userId }, { $set: { password: null } });

    const res = await requestChange(token, uniqueEmail('passwordless-new'), 'anything at all');

    expect(res.status).toBe(202);
  });

  it('when a change was asked for less than a minute ago, then 429 with Retry-After', async () => {
    const paced = await identityWith({ EMAIL_RESEND_INTERVAL: 60_000 });
    const { token } = await registered(paced, 'paced');
    await requestChange(token, uniqueEmail('paced-1'), TEST_PASSWORD, paced).expect(202);

    const res = await requestChange(token, uniqueEmail('paced-2'), TEST_PASSWORD, paced);

    expect(res.status).toBe(429);
    expect(res.body).toEqual({ error: 'Too many requests, please try again later' });
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('when there is no SMTP server, then 503', async () => {
    const mailless = await identityWith({ SMTP_URL: '' });
    const { token } = await registered(mailless, 'mailless');
    const res = await requestChange(token, uniqueEmail('mailless-new'), TEST_PASSWORD, mailless);
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      error: 'E-mail is not available on this server: an address cannot be verified or changed',
    });
  });
});

describe('POST /api/auth/email-change/confirm', () => {
  it('when the link is confirmed, then 200 with the new address verified, and only the new address logs in', async () => {
    const { email, token } = await registered(h, 'move');
    const newEmail = uniqueEmail('move-new');
    const link = await changeLink(token, newEmail);

    const res = await confirm(link, bearer(token));

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ email: newEmail, emailVerified: true });
    const fresh = await login(newEmail);
    expect(fresh.status).toBe(200);
    expect(fresh.body.emailVerified).toBe(true);
    const old = await login(email);
    expect(old.status).toBe(401);
    expect(old.body).toEqual({ error: 'Invalid credentials' });
  });

  it('when the change is confirmed, then a password-reset link and a verification link sent before stop working', async () => {
    const { email, token } = await registered(h, 'links');
    const verification = VERIFY_LINK.exec((await waitForMail(email)).text)?.[1] ?? '';
    const resetSince = new Date();
    await h.http.post('/api/auth/password-reset').send({ email }).expect(202);
    const reset =
      /reset-password\?token=([0-9a-f]{24}\.[\w-]{43})/.exec(
        (await waitForMail(email, { since: resetSince })).text,
      )?.[1] ?? '';
    const newEmail = uniqueEmail('links-new');
    await confirm(await changeLink(token, newEmail)).expect(200);

    const resetAnswer = await h.http
      .post('/api/auth/password-reset/confirm')
      .send({ token: reset, newPassword: 'a brand new secret' });
    const verifyAnswer = await h.http.post('/api/auth/email-verification/confirm').send({ token: verification });

    expect(resetAnswer.status).toBe(400);
    expect(resetAnswer.body).toEqual({ error: 'Invalid or expired reset token' });
    expect(verifyAnswer.status).toBe(400);
    expect(verifyAnswer.body).toEqual({ error: 'Invalid or expired verification link: ask for a new one' });
  });

  it('when the owner confirms while logged in, then every other session ends and the caller’s stays', async () => {
    const { email, token: caller } = await registered(h, 'sessions');
    const other = await login(email).expect(200);
    const link = await changeLink(caller, uniqueEmail('sessions-new'));

    await confirm(link, bearer(caller)).expect(200);

    await eventually(
      'the other session’s access token refused',
      async () => (await me(other.body.token)).status,
      (status) => status === 401,
    );
    const refreshed = await h.http.post('/api/auth/refresh').send({ refreshToken: other.body.refreshToken });
    expect(refreshed.status).toBe(401);
    await sleep(1_200); // more than a poll of the revocation log: the caller's token is still good after it
    expect((await me(caller)).status).toBe(200);
    const sessions = await h.http.get('/api/auth/sessions').set(bearer(caller)).expect(200);
    expect(sessions.body.map((s: { current: boolean }) => s.current)).toEqual([true]);
  });

  it('when the confirmation carries no login, then every session ends', async () => {
    const { token, email } = await registered(h, 'nologin');
    const other = await login(email).expect(200);
    const link = await changeLink(token, uniqueEmail('nologin-new'));

    await confirm(link).expect(200);

    for (const access of [token, other.body.token]) {
      await eventually(
        'an access token refused',
        async () => (await me(access)).status,
        (status) => status === 401,
      );
    }
  });

  it('when the new address got an account meanwhile, then 409, and the account keeps its address', async () => {
    const { email, token, userId } = await registered(h, 'meanwhile');
    const newEmail = uniqueEmail('meanwhile-new');
    const link = await changeLink(token, newEmail);
    await h.http.post('/api/auth/register').send({ email: newEmail, password: TEST_PASSWORD }).expect(201);

    const res = await confirm(link);

    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'That address now belongs to another account: the address was not changed' });
    expect((await h.users.findById(userId).lean())?.email).toBe(email);
  });

  it('when two confirmations race with one token, then exactly one is 200', async () => {
    const { token } = await registered(h, 'race');
    const link = await changeLink(token, uniqueEmail('race-new'));

    const answers = await Promise.all([confirm(link), confirm(link), confirm(link)]);

    expect(answers.map((r) => r.status).sort()).toEqual([200, 400, 400]);
  });

  it('when the token is used, superseded or unknown, then 400 with one message', async () => {
    const { token, userId } = await registered(h, 'bad');
    const older = await changeLink(token, uniqueEmail('bad-1'));
    const newer = await changeLink(token, uniqueEmail('bad-2'));
    await confirm(newer).expect(200);

    for (const bad of [older, newer, `${userId}.${'A'.repeat(43)}`, 'nonsense']) {
      const res = await confirm(bad);
      expect({ bad, status: res.status, body: res.body }).toEqual({ bad, status: 400, body: INVALID });
    }
  });
});
