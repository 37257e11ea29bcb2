import { describe, expect, it } from '@jest/globals';
import { resolveRoute } from '../src/route-table';

const SESSION_ID = '0123456789abcdef01234567';

describe('which rate limit an /api/auth route gets', () => {
  it.each([
    ['POST', '/api/auth/register'],
    ['POST', '/api/auth/login'],
    ['POST', '/api/auth/password-reset'],
    ['POST', '/api/auth/password-reset/confirm'],
    ['PUT', '/api/auth/password'],
    ['DELETE', '/api/auth/account'],
  ])('when %s %s checks or sets a password, then it keeps the strict limit', (method, path) => {
    expect(resolveRoute(method, path)?.limit).toBe('auth');
  });

  it.each([
    ['POST', '/api/auth/refresh', 'none'],
    ['POST', '/api/auth/logout', 'signed'],
    ['GET', '/api/auth/me', 'required'],
    ['GET', '/api/auth/sessions', 'required'],
    ['DELETE', '/api/auth/sessions', 'required'],
    ['DELETE', `/api/auth/sessions/${SESSION_ID}`, 'required'],
  ])(
    'when %s %s checks no password, then it gets the default limit (an office refreshing every hour), with auth %s',
    (method, path, auth) => {
      expect(resolveRoute(method, path)).toEqual({ upstream: 'identity', auth, limit: 'default' });
    },
  );

  it('when a path only begins like a session route, then it is not one', () => {
    expect(resolveRoute('DELETE', `/api/auth/sessions/${SESSION_ID}/more`)?.limit).toBe('auth');
    expect(resolveRoute('POST', '/api/auth/refreshes')?.limit).toBe('auth');
  });
});
