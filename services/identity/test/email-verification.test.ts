/**
 * E-mail verification (email/email-verification.ts) against the real Mailpit: the link registration
 * sends, a new one on request, its confirmation, and every token that must not work.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { mailsTo, refusal, waitForMail } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type IdentityHarness, registered, startIdentity, TEST_PASSWORD, uniqueEmail } from './helpers';

const INVALID = { error: 'Invalid or expired verification link: ask for a new one' };
const LINK = /http:\/\/localhost:3000\/#\/verify-email\?token=([0-9a-f]{24}\.[\w-]{43})/;

let h: IdentityHarness;
const others: IdentityHarness[] = [];

beforeAll(async () => {
  expect(process.env.SMTP_URL).toBeTruthy(); // the test kit runs a real SMTP server
  // No wait between two links here; the pace has a harness of its own below.
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

/** The token in the newest verification link mailed to `email` since `since`. */
async function linkSentTo(email: string, since?: Date): Promise<string> {
  const mail = await waitForMail(email, since ? { since } : {});
  const link = LINK.exec(mail.text);
  expect(link).not.toBeNull();
  return link?.[1] ?? '';
}

/** Asks for a new link as the account's owner, and reads its token out of the mail. */
async function requestLink(token: string, email: string, harness = h): Promise<string> {
  const since = new Date();
  await harness.http.post('/api/auth/email-verification').set(bearer(token)).expect(202);
  return linkSentTo(email, since);
}

const confirm = (token: unknown, harness = h) =>
  harness.http.post('/api/auth/email-verification/confirm').send({ token });

describe('registration', () => {
  it('when an account registers, then its answer is the contract’s, and a verification link is mailed to it', async () => {
    const email = uniqueEmail('welcome');
    const since = new Date();

    const res = await h.http.post('/api/auth/register').send({ email, password: TEST_PASSWORD });

    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['emailVerified', 'expiresIn', 'refreshToken', 'token']);
    expect(res.body.emailVerified).toBe(false);
    const mail = await waitForMail(email, { since });
    expect(mail.subject).toBe('Verify your e-mail address');
    expect(mail.text).toMatch(LINK);
    expect(mail.text).toContain('24 hours');
  });

  it('when there is no SMTP server, then registration answers as ever, and asking for a link is 503', async () => {
    const mailless = await identityWith({ SMTP_URL: '' });
    const { token } = await registered(mailless, 'mailless');

    const res = await mailless.http.post('/api/auth/email-verification').set(bearer(token));

    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      error: 'E-mail is not available on this server: an address cannot be verified or changed',
    });
  });
});

describe('POST /api/auth/email-verification', () => {
  it('when an unverified account asks, then 202, and a link is mailed that the confirmation accepts', async () => {
    const { email, token } = await registered(h, 'ask');
    await linkSentTo(email); // registration's, before the one asked for
    const since = new Date();

    const res = await h.http.post('/api/auth/email-verification').set(bearer(token));

    expect(res.status).toBe(202);
    expect(res.body).toEqual({ message: 'A link to verify the address is on its way' });
    const link = await linkSentTo(email, since);
    const confirmed = await confirm(link);
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toEqual({ email, emailVerified: true });
    expect((await h.http.get('/api/auth/me').set(bearer(token))).body.emailVerified).toBe(true);
    const login = await h.http.post('/api/auth/login').send({ email, password: TEST_PASSWORD }).expect(200);
    expect(login.body.emailVerified).toBe(true);
  });

  it('when the address is verified already, then 409, and no mail goes', async () => {
    const { email, token } = await registered(h, 'verified');
    await confirm(await linkSentTo(email)).expect(200);
    const before = await mailsTo(email);

    const res = await h.http.post('/api/auth/email-verification').set(bearer(token));

    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'The address is verified already' });
    await sleep(300);
    expect(await mailsTo(email)).toBe(before);
  });

  it('when a link was mailed less than a minute ago, then 429 with Retry-After, and no mail goes', async () => {
    const paced = await identityWith({ EMAIL_RESEND_INTERVAL: 60_000 });
    const { email, token } = await registered(paced, 'paced');
    await linkSentTo(email); // registration's: it counts

    const res = await paced.http.post('/api/auth/email-verification').set(bearer(token));

    expect(res.status).toBe(429);
    expect(res.body).toEqual({ error: 'Too many requests, please try again later' });
    const wait = Number(res.headers['retry-after']);
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    expect(await mailsTo(email)).toBe(1);
  });

  it('when there is no token, then 401', async () => {
    const res = await h.http.post('/api/auth/email-verification');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'No token provided' });
  });
});

describe('POST /api/auth/email-verification/confirm', () => {
  it('when the token is malformed or unknown, then 400 with one message', async () => {
    const { email, userId } = await registered(h, 'unknown');
    await linkSentTo(email); // the account has a live link: a wrong secret for it is refused too
    for (const token of ['nonsense', `${userId}.${'A'.repeat(43)}`, `${'0'.repeat(24)}.${'A'.repeat(43)}`]) {
      const res = await confirm(token);
      expect({ token, status: res.status, body: res.body }).toEqual({ token, status: 400, body: INVALID });
    }
  });

  it('when the token is missing, then 400 saying so', async () => {
    const res = await h.http.post('/api/auth/email-verification/confirm').send({});
    expect(res.status).toBe(400);
    expect(res.body).toEqual(refusal('token is required'));
  });

  it('when a token was used already, then 400', async () => {
    const { email } = await registered(h, 'used');
    const link = await linkSentTo(email);
    await confirm(link).expect(200);

    const again = await confirm(link);

    expect(again.status).toBe(400);
    expect(again.body).toEqual(INVALID);
  });

  it('when a newer link was sent, then the older one is 400, and the newer one works', async () => {
    const { email, token } = await registered(h, 'superseded');
    const older = await linkSentTo(email);
    const newer = await requestLink(token, email);

    const res = await confirm(older);

    expect(res.status).toBe(400);
    expect(res.body).toEqual(INVALID);
    await confirm(newer).expect(200);
  });

  it('when the link has expired, then 400', async () => {
    const brief = await identityWith({ EMAIL_TOKEN_TTL: 500 });
    const { email } = await registered(brief, 'expired');
    const link = await linkSentTo(email);
    await sleep(700);

    const res = await confirm(link, brief);

    expect(res.status).toBe(400);
    expect(res.body).toEqual(INVALID);
    expect((await brief.users.findOne({ email }).lean())?.emailVerified).toBe(false);
  });

  it('when the account’s address changed since the link was sent, then 400, and the account stays unverified', async () => {
    const { email, userId } = await registered(h, 'moved');
    const link = await linkSentTo(email);
    const moved = uniqueEmail('moved-to');
    await h.users.updateOne({ _id: userId }, { $set: { email: moved } });

    const res = await confirm(link);

    expect(res.status).toBe(400);
    expect(res.body).toEqual(INVALID);
    expect((await h.users.findById(userId).lean())?.emailVerified).toBe(false);
  });

  it('when two confirmations race with one token, then exactly one is 200 and the other 400', async () => {
    const { email } = await registered(h, 'race');
    const link = await linkSentTo(email);

    const answers = await Promise.all([confirm(link), confirm(link), confirm(link)]);

    expect(answers.map((r) => r.status).sort()).toEqual([200, 400, 400]);
  });

  it('when the confirmation carries no login, then it still works: the link may be opened on another device', async () => {
    const { email, userId } = await registered(h, 'elsewhere');
    const link = await linkSentTo(email);

    const res = await h.http.post('/api/auth/email-verification/confirm').send({ token: link });

    expect(res.status).toBe(200);
    expect((await h.users.findById(userId).lean())?.emailVerified).toBe(true);
  });
});
