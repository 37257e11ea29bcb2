/**
 * Which service owns which path, and what each route asks of the caller. The gateway only
 * routes: it never parses bodies and holds no domain logic.
 */
export type Upstream = 'identity' | 'posts' | 'notes' | 'files' | 'realtime';

/**
 * required: 401 without a valid token; optional: a token, when sent, must be valid; signed: a
 * token, when sent, must be one we signed, expired or revoked as it may be (logout, which ends
 * what it can: an already revoked token answers 204); none.
 */
export type AuthRule = 'required' | 'optional' | 'signed' | 'none';

export interface Route {
  upstream: Upstream;
  auth: AuthRule;
  /** Routes under /api/auth that check a password get the stricter rate limit. */
  limit: 'auth' | 'default';
  /** A stream of events: its answer lasts as long as the client stays (pipelining.ts). */
  stream?: true;
}

/** `/api/posts` and anything below it, but not `/api/postsX`. */
function under(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/** Account routes that act on the caller's own account or sessions; the rest of /api/auth is public. */
const OWN_ACCOUNT =
  /^\/api\/auth\/(?:password|account|me|sessions(?:\/[^/]+)?|identities(?:\/[^/]+)?|email-verification|email-change)\/?$/;
/**
 * The /api/auth routes that check no password: on the default limit, so that an office behind one
 * address, refreshing every hour, is not locked out by the strict one (which stays on login,
 * register, reset, a password change and deletion: the routes that hash). A provider's sign-in:
 * its navigations (start, callback) have their own bound on open flows in identity, and its
 * exchange, which starts a session, counts in the strict limit as login does.
 */
const NO_PASSWORD =
  /^\/api\/auth\/(?:refresh|logout|me|sessions(?:\/[^/]+)?|identities(?:\/[^/]+)?|providers|oidc\/[^/]+\/(?:start|callback))\/?$/;
/**
 * A confirmation of an e-mail change needs no login (the link may be opened on another device);
 * a token, when sent, must be valid: its session is the one the change keeps.
 */
const TOKEN_KEEPS_SESSION = /^\/api\/auth\/email-change\/confirm\/?$/;
/** Logout's Bearer token, when sent, is checked here: one that is not ours is 401 before the hop. */
const LOGOUT = /^\/api\/auth\/logout\/?$/;
const ATTACHMENT = /^(?:\/api)?\/notes\/[^/]+\/attachment\/?$/;
const UPLOAD_URL = /^(?:\/api)?\/upload-url\/?$/;
const MULTIPART = /^(?:\/api)?\/multipart-uploads(?:\/.*)?$/;

function postsAuth(method: string, path: string): AuthRule {
  if (method === 'GET' || method === 'HEAD') {
    return path === '/api/posts/my-posts' || path === '/api/posts/my-posts/' ? 'required' : 'optional';
  }
  return method === 'OPTIONS' ? 'none' : 'required';
}

function accountAuth(method: string, path: string): AuthRule {
  if (method === 'OPTIONS') return 'none';
  if (OWN_ACCOUNT.test(path)) return 'required';
  if (LOGOUT.test(path)) return 'signed';
  return TOKEN_KEEPS_SESSION.test(path) ? 'optional' : 'none';
}

/** The route for a request, or undefined: then the gateway answers 404 itself. */
export function resolveRoute(method: string, path: string): Route | undefined {
  if (under(path, '/api/auth')) {
    return {
      upstream: 'identity',
      auth: accountAuth(method, path),
      limit: NO_PASSWORD.test(path) ? 'default' : 'auth',
    };
  }
  // Display names, public: on the default limit, since a page of posts asks for its authors'.
  if (under(path, '/api/users')) return { upstream: 'identity', auth: 'none', limit: 'default' };
  if (under(path, '/api/posts')) return { upstream: 'posts', auth: postsAuth(method, path), limit: 'default' };
  if (ATTACHMENT.test(path)) return { upstream: 'notes', auth: 'required', limit: 'default' };
  if (under(path, '/api/notes')) return { upstream: 'notes', auth: 'required', limit: 'default' };
  if (UPLOAD_URL.test(path) || MULTIPART.test(path)) return { upstream: 'files', auth: 'required', limit: 'default' };
  if (path === '/api/upload-rules') return { upstream: 'files', auth: 'none', limit: 'default' };
  // A stream may name its caller by a ticket, which only realtime can redeem: a token, when sent,
  // must be valid; realtime answers 401 itself for a protected topic without a caller.
  if (under(path, '/api/realtime')) {
    const auth = method === 'POST' && /^\/api\/realtime\/ticket\/?$/.test(path) ? 'required' : 'optional';
    const stream = method === 'GET' && /^\/api\/realtime\/?$/.test(path);
    return { upstream: 'realtime', auth, limit: 'default', ...(stream ? { stream: true as const } : {}) };
  }
  return undefined;
}
