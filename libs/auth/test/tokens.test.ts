import { HttpError } from '@cs/errors';
import { describe, expect, it } from '@jest/globals';
import jwt from 'jsonwebtoken';
import { signToken, userIdFromAuthorization, verifyToken } from '../src';

const secret = 'a-secret-of-at-least-thirty-two-characters';
const id = '0123456789abcdef01234567';

describe('signToken and verifyToken', () => {
  it('when a token is signed, then it is HS256 with only id, iat and exp, and verifies to the id', () => {
    const token = signToken(id, { secret, expiresIn: '7d' });
    const decoded = jwt.decode(token, { complete: true });

    expect(decoded?.header).toEqual({ alg: 'HS256', typ: 'JWT' });
    const payload = decoded?.payload as jwt.JwtPayload;
    expect(Object.keys(payload).sort()).toEqual(['exp', 'iat', 'id']);
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(7 * 24 * 3600);
    expect(verifyToken(token, secret)).toBe(id);
  });

  it('when the secret changes, then every earlier token is refused', () => {
    const token = signToken(id, { secret, expiresIn: '1h' });

    expect(() => verifyToken(token, `${secret}-rotated`)).toThrow(HttpError);
  });

  it('when the header is not a Bearer header, then 401 no-token; with a bad token, then 401 invalid', () => {
    expect(() => userIdFromAuthorization(undefined, secret)).toThrow('No token provided');
    expect(() => userIdFromAuthorization('Token abc', secret)).toThrow('No token provided');
    expect(() => userIdFromAuthorization('Bearer abc', secret)).toThrow('Invalid or expired token');
    expect(userIdFromAuthorization(`Bearer ${signToken(id, { secret, expiresIn: '1h' })}`, secret)).toBe(id);
  });
});
