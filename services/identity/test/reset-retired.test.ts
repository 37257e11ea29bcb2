/**
 * A reset link is a way into the account: a password change and a successful login retire every
 * link sent before them, so a user who noticed a stolen reset e-mail is safe once they act.
 */
import { waitForMail } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type IdentityHarness, registered, startIdentity, TEST_PASSWORD } from './helpers';

const INVALID = { error: 'Invalid or expired reset token' };
let h: IdentityHarness;

beforeAll(async () => {
  expect(process.env.SMTP_URL).toBeTruthy(); // the test kit runs a real SMTP server
  h = await startIdentity(__filename);
});
afterAll(async () => {
  await h.db.drop();
});

/** Asks for a reset and reads the token out of the e-mail's link. */
async function resetToken(email: string): Promise<string> {
  const since = new Date();
  await h.http.post('/api/auth/password-reset').send({ email }).expect(202);
  const mail = await waitForMail(email, { since, subject: 'Set a new password' });
  const link = /reset-password\?token=([^\s"<&]+)/.exec(mail.text);
  return decodeURIComponent(link?.[1] ?? '');
}

const confirm = (token: string, newPassword = 'the thief’s password') =>
  h.http.post('/api/auth/password-reset/confirm').send({ token, newPassword });

describe('outstanding reset links', () => {
  it('when the password is changed after a reset e-mail was sent, then its link answers 400 and the new password stays', async () => {
    const { email, token } = await registered(h, 'retire-change');
    const stolen = await resetToken(email);

    await h.http
      .put('/api/auth/password')
      .set('Authorization', `Bearer ${token}`)
      .send({ currentPassword: TEST_PASSWORD, newPassword: 'a brand new secret' })
      .expect(200);

    const res = await confirm(stolen);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(INVALID);
    await h.http.post('/api/auth/login').send({ email, password: 'a brand new secret' }).expect(200);
  });

  it('when the account logs in after a reset e-mail was sent, then its link answers 400 and the password stays', async () => {
    const { email } = await registered(h, 'retire-login');
    const stolen = await resetToken(email);

    await h.http.post('/api/auth/login').send({ email, password: TEST_PASSWORD }).expect(200);

    const res = await confirm(stolen);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(INVALID);
    await h.http.post('/api/auth/login').send({ email, password: TEST_PASSWORD }).expect(200);
  });

  it('when a login fails after a reset e-mail was sent, then its link still works: a guess retires nothing', async () => {
    const { email } = await registered(h, 'retire-failed');
    const link = await resetToken(email);

    await h.http.post('/api/auth/login').send({ email, password: 'not the password' }).expect(401);

    await confirm(link, 'set by the owner').expect(204);
    await h.http.post('/api/auth/login').send({ email, password: 'set by the owner' }).expect(200);
  });

  it('when a reset e-mail is sent after a login, then its link works', async () => {
    const { email } = await registered(h, 'retire-after');
    await h.http.post('/api/auth/login').send({ email, password: TEST_PASSWORD }).expect(200);
    const link = await resetToken(email);

    await confirm(link, 'set by the owner').expect(204);
    await h.http.post('/api/auth/login').send({ email, password: 'set by the owner' }).expect(200);
  });
});
