import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { mailsTo, refusal, waitForMail } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RESETS_PER_ADDRESS } from '../src/password-reset/password-reset';
import { type IdentityHarness, startIdentity, uniqueEmail } from './helpers';

const PASSWORD = 'correct horse battery';
const ACCEPTED = {
  message: 'If an account exists for that address, an e-mail with a link to set a new password is on its way',
};
const INVALID = { error: 'Invalid or expired reset token' };
let h: IdentityHarness;
const others: IdentityHarness[] = [];

beforeAll(async () => {
  expect(process.env.SMTP_URL).toBeTruthy(); // the test kit runs a real SMTP server
  h = await startIdentity(__filename);
});
afterAll(async () => {
  await Promise.all([h, ...others].map((harness) => harness.db.drop()));
});

/** Identity with other settings, on a database of its own. */
async function identityWith(config: Parameters<typeof startIdentity>[1]): Promise<IdentityHarness> {
  const harness = await startIdentity(__filename, config);
  others.push(harness);
  return harness;
}

async function account(harness = h): Promise<string> {
  const email = uniqueEmail('reset');
  await harness.http.post('/api/auth/register').send({ email, password: PASSWORD }).expect(201);
  return email;
}

/** Asks for a reset and reads the token out of the e-mail's link, as a person would follow it. */
async function resetToken(email: string, harness = h): Promise<string> {
  const since = new Date();
  await harness.http.post('/api/auth/password-reset').send({ email }).expect(202);
  const mail = await waitForMail(email, { since, subject: 'Set a new password' });
  const link = /http:\/\/localhost:3000\/#\/reset-password\?token=([^\s"<&]+)/.exec(mail.text);
  expect(link).not.toBeNull();
  return decodeURIComponent(link?.[1] ?? '');
}

const confirm = (token: string, newPassword = 'a brand new secret', harness = h) =>
  harness.http.post('/api/auth/password-reset/confirm').send({ token, newPassword });

describe('POST /api/auth/password-reset', () => {
  it('when the address has an account, then 202, and an e-mail links to the web client’s reset screen', async () => {
    const email = await account();
    const since = new Date();

    const res = await h.http.post('/api/auth/password-reset').send({ email: `  ${email.toUpperCase()} ` });

    expect(res.status).toBe(202);
    expect(res.body).toEqual(ACCEPTED);
    const mail = await waitForMail(email, { since, subject: 'Set a new password' });
    expect(mail.subject).toBe('Set a new password');
    expect(mail.text).toMatch(/http:\/\/localhost:3000\/#\/reset-password\?token=[0-9a-f]{24}\.[\w-]{43}/);
    expect(mail.text).toContain('30 minutes');
  });

  it('when the address has no account, then the same 202 and body, and no e-mail is sent', async () => {
    const known = await account();
    const unknown = uniqueEmail('nobody');

    const missing = await h.http.post('/api/auth/password-reset').send({ email: unknown });
    const present = await h.http.post('/api/auth/password-reset').send({ email: known });

    expect(missing.status).toBe(202);
    expect(missing.text).toBe(present.text);
    expect(missing.headers['content-type']).toBe(present.headers['content-type']);
    // The known address's e-mail was looked up and sent after the unknown one's lookup had ended.
    await waitForMail(known, { subject: 'Set a new password' });
    expect(await mailsTo(unknown)).toBe(0);
  });

  it('when known and unknown addresses alternate, then their answers take the same time', async () => {
    const PAIRS = 16;
    const known = await Promise.all(Array.from({ length: PAIRS }, () => account()));
    // Their registrations' verification links are sent first: no e-mail is still going out beside a measure.
    await Promise.all(known.map((email) => waitForMail(email, { subject: 'Verify your e-mail address' })));
    /** How long the answer took; for a known address, only once its e-mail has gone as well. */
    const timed = async (email: string, hasAccount: boolean) => {
      const since = new Date();
      const started = performance.now();
      await h.http.post('/api/auth/password-reset').send({ email }).expect(202);
      const took = performance.now() - started;
      if (hasAccount) await waitForMail(email, { since, subject: 'Set a new password' });
      return took;
    };
    // Each known request is measured with no earlier e-mail still being sent beside it (that work
    // would count against whichever request came next), and the two kinds take turns going first,
    // so that an unknown address's lookup, which cannot be waited for, runs beside either kind.
    const differences: number[] = [];
    const unknownTimes: number[] = [];
    for (const [i, email] of known.entries()) {
      let knownTime: number;
      let unknownTime: number;
      if (i % 2 === 0) {
        knownTime = await timed(email, true);
        unknownTime = await timed(uniqueEmail('nobody'), false);
      } else {
        unknownTime = await timed(uniqueEmail('nobody'), false);
        knownTime = await timed(email, true);
      }
      differences.push(knownTime - unknownTime);
      unknownTimes.push(unknownTime);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

    // The answer awaits the same work for both (the per-address count); the lookup and the e-mail
    // come after it. A difference of a database round trip or more, in each pair, would show here;
    // a moment of load on the machine falls on both requests of a pair alike.
    expect(Math.abs(median(differences))).toBeLessThan(Math.max(3, 0.5 * median(unknownTimes)));
  });

  it('when the SMTP server accepts connections but never answers, then the answer still comes at once', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => void sockets.push(socket)).listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const port = (silent.address() as { port: number }).port;
    const stuck = await identityWith({ SMTP_URL: `smtp://127.0.0.1:${port}` });
    try {
      const email = await account(stuck);
      const started = performance.now();

      const res = await stuck.http.post('/api/auth/password-reset').send({ email });

      expect(res.status).toBe(202);
      expect(res.body).toEqual(ACCEPTED);
      expect(performance.now() - started).toBeLessThan(2_000); // the SMTP timeouts are 10 s
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });

  it(`when one address asks more than ${RESETS_PER_ADDRESS} times in an hour, then 429 with Retry-After, account or not`, async () => {
    for (const email of [await account(), uniqueEmail('nobody')]) {
      for (let i = 0; i < RESETS_PER_ADDRESS; i++) {
        await h.http.post('/api/auth/password-reset').send({ email }).expect(202);
      }

      const res = await h.http.post('/api/auth/password-reset').send({ email });

      expect(res.status).toBe(429);
      expect(res.body).toEqual({ error: 'Too many requests, please try again later' });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(3000);
    }
  });

  it('when no SMTP server is configured, then 503 {error}, for any address', async () => {
    const mute = await identityWith({ SMTP_URL: '' });
    for (const email of [await account(mute), uniqueEmail('nobody')]) {
      const res = await mute.http.post('/api/auth/password-reset').send({ email });

      expect(res.status).toBe(503);
      expect(res.body).toEqual({ error: 'Password reset by e-mail is not available' });
    }
  });

  it.each([
    ['no email', {}, 'Email is required'],
    ['a number', { email: 42 }, 'Email must be a string'],
    ['an operator', { email: { $ne: '' } }, 'Email must be a string'],
    ['no address', { email: 'not-an-address' }, 'Email must be a valid address of at most 254 characters'],
  ])('when the body has %s, then 400', async (_case, body, error) => {
    const res = await h.http.post('/api/auth/password-reset').send(body);

    expect(res.status).toBe(400);
    expect(res.body).toEqual(refusal(error));
  });
});

describe('POST /api/auth/password-reset/confirm', () => {
  it('when the token is fresh, then 204, the new password logs in and the old one does not', async () => {
    const email = await account();
    const token = await resetToken(email);

    const res = await confirm(token);

    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    await h.http.post('/api/auth/login').send({ email, password: 'a brand new secret' }).expect(200);
    await h.http.post('/api/auth/login').send({ email, password: PASSWORD }).expect(401);
  });

  it('when the token is used a second time, then 400, and the password stays the one it set', async () => {
    const email = await account();
    const token = await resetToken(email);
    await confirm(token).expect(204);

    const res = await confirm(token, 'yet another password');

    expect(res.status).toBe(400);
    expect(res.body).toEqual(INVALID);
    await h.http.post('/api/auth/login').send({ email, password: 'a brand new secret' }).expect(200);
  });

  it('when two confirmations race with one token, then exactly one sets the password', async () => {
    const email = await account();
    const token = await resetToken(email);

    const answers = await Promise.all([confirm(token, 'first racer wins'), confirm(token, 'second racer wins')]);

    expect(answers.map((r) => r.status).sort()).toEqual([204, 400]);
    const winner = answers[0]?.status === 204 ? 'first racer wins' : 'second racer wins';
    await h.http.post('/api/auth/login').send({ email, password: winner }).expect(200);
  });

  it('when a newer token was sent, then the earlier one is refused and the newer one works', async () => {
    const email = await account();
    const earlier = await resetToken(email);
    const newer = await resetToken(email);

    expect((await confirm(earlier)).body).toEqual(INVALID);
    await confirm(newer).expect(204);
  });

  it('when the token has expired, then 400', async () => {
    const brief = await identityWith({ PASSWORD_RESET_TTL: 1_000 });
    const email = await account(brief);
    const token = await resetToken(email, brief);
    await sleep(1_100);

    const res = await confirm(token, 'a brand new secret', brief);

    expect(res.status).toBe(400);
    expect(res.body).toEqual(INVALID);
    await brief.http.post('/api/auth/login').send({ email, password: PASSWORD }).expect(200);
  });

  it.each([
    ['malformed', 'not-a-token'],
    ['unknown', `${'a'.repeat(24)}.${'b'.repeat(43)}`],
    ['of a real user but not sent', 'unknown-secret'],
  ])('when the token is %s, then 400 with the same message', async (kind, raw) => {
    const email = await account();
    const real = await resetToken(email);
    const token = kind === 'of a real user but not sent' ? `${real.split('.')[0]}.${'c'.repeat(43)}` : raw;

    const res = await confirm(token);

    expect(res.status).toBe(400);
    expect(res.body).toEqual(INVALID);
  });

  it('when the new password breaks a rule, then 400 with its message, and the token still works after', async () => {
    const email = await account();
    const token = await resetToken(email);

    const res = await confirm(token, 'short');

    expect(res.status).toBe(400);
    expect(res.body).toEqual(refusal('Password must be at least 8 characters'));
    await confirm(token).expect(204);
  });

  it.each([
    ['no token', { newPassword: 'a brand new secret' }, 'token and newPassword are required'],
    ['a number for newPassword', { token: 'x', newPassword: 12345678 }, 'token and newPassword must be strings'],
  ])('when the body has %s, then 400', async (_case, body, error) => {
    const res = await h.http.post('/api/auth/password-reset/confirm').send(body);

    expect(res.status).toBe(400);
    expect(res.body).toEqual(refusal(error));
  });
});
