import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type IdentityHarness, startIdentity, uniqueEmail } from './helpers';

let h: IdentityHarness;

beforeAll(async () => {
  h = await startIdentity(__filename, { JWT_EXPIRES_IN: '15m' });
});
afterAll(async () => {
  await h.db.drop();
});

function decodePart(token: string, index: number): Record<string, unknown> {
  const part = token.split('.')[index] ?? '';
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
}

describe('the token issued by register and login', () => {
  it('has three parts, an HS256 header, and only the id, iat and exp claims with the configured lifetime', async () => {
    const email = uniqueEmail();
    const registered = await h.http.post('/api/auth/register').send({ email, password: 'password-1' }).expect(201);
    const loggedIn = await h.http.post('/api/auth/login').send({ email, password: 'password-1' }).expect(200);

    for (const token of [registered.body.token as string, loggedIn.body.token as string]) {
      expect(token.split('.')).toHaveLength(3);
      expect(decodePart(token, 0)).toEqual({ alg: 'HS256', typ: 'JWT' });
      const claims = decodePart(token, 1);
      expect(Object.keys(claims).sort()).toEqual(['exp', 'iat', 'id']);
      expect(claims.id).toMatch(/^[0-9a-f]{24}$/);
      expect((claims.exp as number) - (claims.iat as number)).toBe(15 * 60);
    }
  });
});
