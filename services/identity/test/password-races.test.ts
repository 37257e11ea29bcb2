/**
 * Writes of a password are conditional on the hash that was checked, on the run's real database
 * (FerretDB by default, where a filtered update is not atomic): of two writes that checked the
 * same hash, exactly one takes effect, and only that one reports success.
 */
import { type api, waitForMail } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type IdentityHarness, registered, startIdentity, TEST_PASSWORD } from './helpers';

const TRIES = 8;
let a: IdentityHarness;
/** A second replica, on a's database. */
let b: { http: ReturnType<typeof api> };

beforeAll(async () => {
  expect(process.env.SMTP_URL).toBeTruthy(); // the test kit runs a real SMTP server
  a = await startIdentity(__filename);
  b = { http: await a.replica() };
});
afterAll(async () => {
  await a.db.drop();
});

const login = (email: string, password: string) =>
  a.http
    .post('/api/auth/login')
    .send({ email, password })
    .then((res) => res.status);

describe('password writes that race', () => {
  it(`when two changes with the same current password arrive at once, then exactly one succeeds and its password is the one that logs in, in each of ${TRIES} tries`, async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < TRIES; i++) {
      const { email, token } = await registered(a, 'race-change');
      const change = (h: { http: ReturnType<typeof api> }, newPassword: string) =>
        h.http
          .put('/api/auth/password')
          .set('Authorization', `Bearer ${token}`)
          .send({ currentPassword: TEST_PASSWORD, newPassword });

      const [first, second] = await Promise.all([change(a, 'first new password'), change(b, 'second new password')]);

      const logins = [await login(email, 'first new password'), await login(email, 'second new password')];
      outcomes.push(`${first.status} ${second.status}, logs in: ${logins.join(' ')}`);
    }
    const allowed = ['200 401, logs in: 200 401', '401 200, logs in: 401 200'];
    expect(outcomes.filter((outcome) => !allowed.includes(outcome))).toEqual([]);
  });

  it(`when a change and a reset confirmation race, then only the one that took effect reports success, in each of ${TRIES} tries`, async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < TRIES; i++) {
      const { email, token } = await registered(a, 'race-reset');
      const since = new Date();
      await a.http.post('/api/auth/password-reset').send({ email }).expect(202);
      const mail = await waitForMail(email, { since, subject: 'Set a new password' });
      const resetToken = decodeURIComponent(/reset-password\?token=([^\s"<&]+)/.exec(mail.text)?.[1] ?? '');

      const [changed, reset] = await Promise.all([
        a.http
          .put('/api/auth/password')
          .set('Authorization', `Bearer ${token}`)
          .send({ currentPassword: TEST_PASSWORD, newPassword: 'changed password' }),
        b.http.post('/api/auth/password-reset/confirm').send({ token: resetToken, newPassword: 'reset password' }),
      ]);

      const logins = [await login(email, 'changed password'), await login(email, 'reset password')];
      outcomes.push(`change ${changed.status}, reset ${reset.status}, logs in: ${logins.join(' ')}`);
    }
    const allowed = ['change 200, reset 400, logs in: 200 401', 'change 401, reset 204, logs in: 401 200'];
    expect(outcomes.filter((outcome) => !allowed.includes(outcome))).toEqual([]);
  });
});
