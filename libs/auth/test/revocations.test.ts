import { HttpError } from '@cs/errors';
import { describe, expect, it } from '@jest/globals';
import { createTokenVerifier, FIRST_READ_WAIT_MS, notBeforeAt, RevocationList, signToken, tokenDigest } from '../src';

const secret = 'a-secret-of-at-least-thirty-two-characters';
const alice = '0123456789abcdef01234567';
const bob = '76543210fedcba9876543210';
const tokenAt = (userId: string, issuedAt: number) => signToken(userId, { secret, expiresIn: '1h' }, issuedAt);
const bearer = (token: string) => `Bearer ${token}`;
const now = Math.floor(Date.now() / 1000);

function listOf(...entries: Parameters<RevocationList['apply']>[0]['entries']): RevocationList {
  const list = new RevocationList();
  list.apply({ entries, last: entries.at(-1)?.seq ?? 0 });
  return list;
}

describe('the revocation list', () => {
  it('when a user is revoked at a time, then tokens issued in that second or before are refused, and from the next second on they work', async () => {
    const at = (now - 10) * 1000 + 400;
    const notBefore = notBeforeAt(at);
    const list = listOf({ seq: 1, userId: alice, notBefore, until: now + 3600 });
    const tokens = createTokenVerifier(secret, list);

    expect(notBefore).toBe(now - 9);
    await expect(tokens.userIdFromAuthorization(bearer(tokenAt(alice, now - 10)))).rejects.toThrow(
      'Invalid or expired token',
    );
    await expect(tokens.userIdFromAuthorization(bearer(tokenAt(alice, now - 20)))).rejects.toThrow(
      'Invalid or expired token',
    );
    expect(await tokens.userIdFromAuthorization(bearer(tokenAt(alice, now - 9)))).toBe(alice);
    expect(await tokens.userIdFromAuthorization(bearer(tokenAt(bob, now - 20)))).toBe(bob);
  });

  it('when one token is revoked by digest, then that token is refused and another of the same user works', async () => {
    const revoked = tokenAt(alice, now - 5);
    const anyones = tokenAt(bob, now - 5);
    const list = listOf(
      { seq: 1, userId: alice, digest: tokenDigest(revoked), until: now + 3600 },
      // An entry that names no user still counts, for whoever the token is.
      { seq: 2, digest: tokenDigest(anyones), until: now + 3600 },
    );
    const tokens = createTokenVerifier(secret, list);

    await expect(tokens.userIdFromAuthorization(bearer(revoked))).rejects.toThrow('Invalid or expired token');
    await expect(tokens.userIdFromAuthorization(bearer(anyones))).rejects.toThrow('Invalid or expired token');
    expect(await tokens.userIdFromAuthorization(bearer(tokenAt(alice, now - 4)))).toBe(alice);
    expect(await tokens.userIdFromAuthorization(bearer(tokenAt(bob, now - 4)))).toBe(bob);
    expect(list.size).toBe(2);
  });

  it('when a later not-before arrives for a user, then it wins, and an earlier one never moves it back', () => {
    const list = listOf(
      { seq: 1, userId: alice, notBefore: now - 5, until: now + 3600 },
      { seq: 2, userId: alice, notBefore: now - 50, until: now + 3600 },
    );

    expect(list.refuses(tokenAt(alice, now - 6), alice, now - 6)).toBe(true);
    expect(list.refuses(tokenAt(alice, now - 5), alice, now - 5)).toBe(false);
  });

  it('when a batch ends before the log does, then the list is not current until it reads the rest', () => {
    const list = new RevocationList();
    const first = list.apply({ entries: [{ seq: 1, userId: alice, notBefore: now, until: now + 60 }], last: 2 });

    expect(first.caughtUp).toBe(false);
    expect(list.currentAt).toBeUndefined();
    const rest = list.apply({ entries: [{ seq: 2, userId: bob, notBefore: now, until: now + 60 }], last: 2 });
    expect(rest.caughtUp).toBe(true);
    expect(list.currentAt).toBeDefined();
    expect(list.seq).toBe(2);
  });

  it('when entries come again (a read that overlapped the last), then each is applied once and the sequence does not move back', () => {
    const list = listOf({ seq: 1, userId: alice, notBefore: now, until: now + 60 });
    list.apply({ entries: [{ seq: 1, userId: alice, notBefore: now, until: now + 60 }], last: 1 });

    expect(list.seq).toBe(1);
    expect(list.size).toBe(1);
  });

  it('when the log is shorter than what was read of it (a new database), then the list starts again from its first entry', () => {
    const list = listOf(
      { seq: 1, userId: alice, notBefore: now, until: now + 60 },
      { seq: 2, userId: bob, notBefore: now, until: now + 60 },
    );
    const restarted = list.apply({ entries: [], last: 1 });

    expect(restarted.caughtUp).toBe(false);
    expect(list.seq).toBe(0);
    expect(list.size).toBe(0);
  });

  it('when an entry has outlived every token it refuses, then it is forgotten', () => {
    const list = new RevocationList();
    const later = Date.now() + 120_000;
    list.apply({ entries: [{ seq: 1, userId: alice, notBefore: now - 7200, until: now - 3600 }], last: 1 }, later);

    expect(list.size).toBe(0);
  });
});

describe('the token verifier', () => {
  it('when the revocation list is not read within the wait, then a valid token gets 503 with Retry-After, and readiness says why', async () => {
    const tokens = createTokenVerifier(secret, new RevocationList());
    const startedAt = Date.now();
    const refusal = await tokens.userIdFromAuthorization(bearer(tokenAt(alice, now))).catch((err: unknown) => err);

    expect(refusal).toBeInstanceOf(HttpError);
    expect((refusal as HttpError).status).toBe(503);
    expect((refusal as HttpError).headers).toEqual({ 'Retry-After': '1' });
    // Said to the client as it is, by a service's error handler as by the gateway.
    expect((refusal as HttpError).expose).toBe(true);
    expect((refusal as HttpError).message).toBe('Tokens cannot be checked yet; try again shortly');
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(FIRST_READ_WAIT_MS - 5);
    expect(tokens.ready()).toBe(false);
    expect(tokens.notice()).toBe('the revocation list has not been read yet');
  });

  it('when a request comes before the first read, then it waits for the read and is answered by what the list says', async () => {
    const list = new RevocationList();
    const tokens = createTokenVerifier(secret, list);
    const revoked = tokenAt(bob, now - 5);
    const good = tokens.userIdFromAuthorization(bearer(tokenAt(alice, now)));
    const refused = tokens.userIdFromAuthorization(bearer(revoked)).catch((err: unknown) => err);
    await new Promise((resolve) => setTimeout(resolve, 50));

    list.apply({ entries: [{ seq: 1, userId: bob, digest: tokenDigest(revoked), until: now + 3600 }], last: 1 });

    expect(await good).toBe(alice);
    expect(await refused).toMatchObject({ status: 401, message: 'Invalid or expired token' });
    expect(tokens.ready()).toBe(true);
  });

  it('when the list has not been brought up to date for more than 5 s, then the verifier still serves and its notice says since when', async () => {
    const list = listOf();
    const tokens = createTokenVerifier(secret, list);
    const currentAt = list.currentAt as number;

    expect(tokens.notice(currentAt + 5_000)).toBeUndefined();
    expect(tokens.notice(currentAt + 12_000)).toMatch(/not been brought up to date for 12 s/);
    expect(tokens.ready()).toBe(true);
    expect(await tokens.userIdFromAuthorization(bearer(tokenAt(alice, now)))).toBe(alice);
  });

  it('when the header is missing or the token is bad, then the answers are the contract’s, before the list is asked', async () => {
    const tokens = createTokenVerifier(secret, new RevocationList());

    await expect(tokens.userIdFromAuthorization(undefined)).rejects.toThrow('No token provided');
    await expect(tokens.userIdFromAuthorization('Bearer nonsense')).rejects.toThrow('Invalid or expired token');
  });
});
