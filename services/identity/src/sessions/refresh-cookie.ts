/**
 * Cookie mode: the refresh token in a cookie page script cannot read, for a web client on our own
 * origin. A client asks for it with the header `X-Refresh-Token: cookie` on register, login, a
 * password change, refresh and logout; without the header nothing here applies, and the JSON form
 * stays as it is for every other client.
 *
 * - The answers of register, login, a password change and refresh carry `{token, expiresIn}` and
 *   set `cs_refresh` (`HttpOnly; SameSite=Strict; Path=/api/auth`, `Secure` when WEB_URL is
 *   https, for as long as the session may stay idle). The body never carries the refresh token.
 * - Refresh and logout take the token from that cookie and no body; logout clears it.
 *
 * Cross-site request forgery: the cookie is only read for a request that carries the header, which
 * a page of another origin can only send after a CORS preflight that the gateway refuses to any
 * origin but FRONTEND_ORIGIN; SameSite=Strict keeps the browser from sending the cookie with a
 * request from another site at all; and a request the browser marks `Sec-Fetch-Site: cross-site`
 * (in any case) is refused with 403 in cookie mode whatever it carries.
 *
 * Every cookie-mode check (`checks()` on the whole auth router: cross-site; `fromCookie`: a token in
 * the body) runs before the body's schema, so a refused request has cost no lookup, no bcrypt and
 * no session.
 */
import { HttpError } from '@cs/errors';
import { type AppContext, type AppMiddleware, bodyOf } from '@cs/koa';
import type { SessionTokens, SignedIn } from './sessions';

export const REFRESH_MODE_HEADER = 'x-refresh-token';
export const REFRESH_COOKIE = 'cs_refresh';
const PATH = '/api/auth';

export const cookieMessages = {
  tokenInBody: 'In cookie mode the refresh token comes from its cookie, never from the body',
  crossSite: 'Cookie mode is only for requests from this site',
} as const;

export function inCookieMode(ctx: AppContext): boolean {
  return ctx.get(REFRESH_MODE_HEADER).trim().toLowerCase() === 'cookie';
}

/** The value of the request's cookie `name`, if it sent one. */
export function cookieOf(ctx: AppContext, name: string): string | undefined {
  for (const part of ctx.get('cookie').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

export function refreshCookies({ secure, maxAgeS }: { secure: boolean; maxAgeS: number }) {
  const setCookie = (ctx: AppContext, value: string, maxAge: number) => {
    ctx.append(
      'Set-Cookie',
      `${REFRESH_COOKIE}=${value}; Path=${PATH}; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`,
    );
  };
  return {
    /**
     * First on every auth route: a cookie-mode request the browser marks cross-site is refused
     * before anything else runs. Header values are compared whatever their case.
     */
    checks(): AppMiddleware {
      return async function cookieModeChecks(ctx, next) {
        if (inCookieMode(ctx) && ctx.get('sec-fetch-site').trim().toLowerCase() === 'cross-site') {
          throw new HttpError(403, cookieMessages.crossSite);
        }
        await next();
      };
    },

    /**
     * Before the body's check on refresh and logout (after `checks()`): in cookie mode, the cookie's token becomes the
     * body's `refreshToken`, and a body that brings one of its own is refused. Without the cookie,
     * `whenMissing` answers (refresh: 401), or the body stays without a token (logout).
     */
    fromCookie(whenMissing?: () => HttpError): AppMiddleware {
      return async function refreshTokenFromCookie(ctx, next) {
        if (inCookieMode(ctx)) {
          const body = bodyOf(ctx);
          if ('refreshToken' in body) throw new HttpError(400, cookieMessages.tokenInBody);
          const token = cookieOf(ctx, REFRESH_COOKIE);
          if (token === undefined && whenMissing) throw whenMissing();
          (ctx.request as { body?: unknown }).body = token === undefined ? body : { ...body, refreshToken: token };
        }
        await next();
      };
    },

    /** The refresh token a cookie-mode request presents in its cookie; undefined otherwise. */
    presented(ctx: AppContext): string | undefined {
      return inCookieMode(ctx) ? cookieOf(ctx, REFRESH_COOKIE) : undefined;
    },

    /** The session's answer: the pair, or in cookie mode the access token and the cookie. */
    answer(ctx: AppContext, pair: SessionTokens | SignedIn): void {
      if (!inCookieMode(ctx)) {
        ctx.body = pair;
        return;
      }
      setCookie(ctx, pair.refreshToken, maxAgeS);
      const { refreshToken: _inTheCookie, ...body } = pair;
      ctx.body = body;
    },

    /** Logout in cookie mode: the browser forgets the cookie. */
    clear(ctx: AppContext): void {
      if (inCookieMode(ctx)) setCookie(ctx, '', 0);
    },
  };
}

export type RefreshCookies = ReturnType<typeof refreshCookies>;
