/**
 * The client library's calls for the account's address, against the whole real system and its
 * real SMTP server (Mailpit): whether it is verified, verifying it with the e-mail's token, and
 * moving the account to a new address.
 */
import { randomBytes } from 'node:crypto';
import type { RunningSystem } from '@cs/devstack';
import { eventually, startTestSystem, waitForMail } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type ApiError, createContentClient, memoryStore } from '../src/index.js';

const id = randomBytes(3).toString('hex');
let system: RunningSystem;
let base: string;

beforeAll(async () => {
  system = await startTestSystem({ env: { AUTH_RATE_LIMIT: '0' } });
  base = system.gatewayUrl;
}, 60_000);
afterAll(async () => {
  await system?.stop();
});

const email = (label: string) => `${label}-${id}-${randomBytes(3).toString('hex')}@example.com`;

/** What an error is, as data, so a failed expectation shows all of it. */
const shape = (error: unknown) => {
  const e = error as ApiError & { kind: string };
  return { kind: e.kind, name: e.name, status: e.status, message: e.message, retryAfter: e.retryAfter };
};

/** The token of the newest e-mail to `address` whose link opens `page` of the web client. */
async function tokenFor(address: string, page: string, since?: Date): Promise<string> {
  const mail = await waitForMail(address, since ? { since } : {});
  const token = new RegExp(`#/${page}\\?token=([\\w.-]+)`).exec(mail.text)?.[1];
  if (!token) throw new Error(`no ${page} link in: ${mail.text}`);
  return token;
}

describe('e-mail verification', () => {
  it('a new account’s session says its address is unverified; the token of the mail registration sent verifies it, and the session then says so', async () => {
    const store = memoryStore();
    const client = createContentClient({ baseUrl: base, store });
    const address = email('verify');
    const session = await client.register(address, 'correct horse battery');
    expect(session.emailVerified).toBe(false);
    expect(await client.account.me()).toMatchObject({ email: address, emailVerified: false });

    const token = await tokenFor(address, 'verify-email');
    await expect(client.account.confirmEmailVerification(token)).resolves.toEqual({
      email: address,
      emailVerified: true,
    });
    expect(store.load()).toMatchObject({ email: address, emailVerified: true });
    expect(await client.account.me()).toMatchObject({ emailVerified: true });
    // A login answers it too.
    await expect(createContentClient({ baseUrl: base }).login(address, 'correct horse battery')).resolves.toMatchObject(
      { emailVerified: true },
    );
  });

  it('asking again within the minute is an ApiError 429 with the seconds to wait; once verified, asking is a 409', async () => {
    const client = createContentClient({ baseUrl: base });
    const address = email('again');
    await client.register(address, 'correct horse battery');
    const token = await tokenFor(address, 'verify-email');

    const early = await client.account.requestEmailVerification().catch((e: unknown) => e);
    expect(shape(early)).toMatchObject({ kind: 'api', name: 'ApiError', status: 429 });
    expect((early as ApiError).retryAfter).toBeGreaterThan(0);

    await client.account.confirmEmailVerification(token);
    const verified = await client.account.requestEmailVerification().catch((e: unknown) => e);
    expect(shape(verified)).toMatchObject({ kind: 'api', status: 409, message: expect.any(String) });
    // The session goes on: a 409 is no 401.
    expect(client.session()).toMatchObject({ email: address, emailVerified: true });
  });

  it('a token that is not one, or one used already, is an ApiError 400, whoever is signed in', async () => {
    const client = createContentClient({ baseUrl: base });
    const address = email('spent');
    await client.register(address, 'correct horse battery');
    const token = await tokenFor(address, 'verify-email');
    await client.account.confirmEmailVerification(token);

    for (const bad of ['not-a-token', token]) {
      const error = await client.account.confirmEmailVerification(bad).catch((e: unknown) => e);
      expect(shape(error)).toMatchObject({ kind: 'api', name: 'ApiError', status: 400 });
    }
    const stranger = await createContentClient({ baseUrl: base })
      .account.confirmEmailVerification(token)
      .catch((e: unknown) => e);
    expect(shape(stranger)).toMatchObject({ kind: 'api', status: 400 });
    expect(client.session()?.email).toBe(address);
  });
});

describe('e-mail change', () => {
  it('a wrong password is an ApiError 401 and the session goes on', async () => {
    const store = memoryStore();
    const client = createContentClient({ baseUrl: base, store });
    const address = email('wrong');
    const session = await client.register(address, 'correct horse battery');
    const error = await client.account.requestEmailChange(email('new'), 'not the password').catch((e: unknown) => e);
    expect(shape(error)).toMatchObject({ kind: 'api', name: 'ApiError', status: 401 });
    expect(store.load()).toEqual(session);
  });

  it('the link mailed to the new address moves the account there: the session that confirms it goes on under the new address, another ends, and login works with the new address only', async () => {
    const store = memoryStore();
    const client = createContentClient({ baseUrl: base, store });
    const old = email('old');
    const next = email('next');
    await client.register(old, 'correct horse battery');
    const elsewhere = createContentClient({ baseUrl: base });
    await elsewhere.login(old, 'correct horse battery');
    const since = new Date();
    await expect(client.account.requestEmailChange(next, 'correct horse battery')).resolves.toBeUndefined();

    const token = await tokenFor(next, 'confirm-email-change', since);
    // The old address hears of it, with no link to follow.
    const notice = await waitForMail(old, { since });
    expect(notice.text).not.toMatch(/token=/);

    await expect(client.account.confirmEmailChange(token)).resolves.toEqual({ email: next, emailVerified: true });
    // The session that confirmed is the one the change keeps, and it now goes by the new address.
    expect(store.load()).toMatchObject({ email: next, emailVerified: true });
    await expect(createContentClient({ baseUrl: base }).login(next, 'correct horse battery')).resolves.toMatchObject({
      email: next,
      emailVerified: true,
    });
    // The other device's session ended with the change: its refresh is refused.
    const ended = await eventually(
      'the other session ended',
      () =>
        elsewhere.sessions.list().then(
          () => undefined,
          (e: unknown) => e,
        ),
      (error) => error !== undefined,
    );
    expect(shape(ended)).toMatchObject({ kind: 'session-expired', status: 401 });
    // …while this one, asked after that, still works.
    expect(await client.account.me()).toMatchObject({ email: next, emailVerified: true });
    expect(store.load()).toMatchObject({ email: next });
    const refused = await createContentClient({ baseUrl: base })
      .login(old, 'correct horse battery')
      .catch((e: unknown) => e);
    expect(shape(refused)).toMatchObject({ kind: 'api', status: 401 });
  });
});
