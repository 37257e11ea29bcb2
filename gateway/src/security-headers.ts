/**
 * Security headers on every answer, from helmet rather than our own code. Each kind of answer has
 * its own Content-Security-Policy:
 * - API answers (JSON) may load nothing and be framed by nobody;
 * - the web client's page keeps its own strict policy (web.ts);
 * - the API reference at /docs gets what Swagger UI needs: its script and styles from us (it sets
 *   inline styles), images as data: URLs, and /openapi.json from our origin.
 *
 * Strict-Transport-Security is left to whatever terminates TLS in front of the gateway: the
 * gateway itself speaks plain HTTP and cannot know the host's TLS set-up, and a wrong HSTS header
 * locks browsers out of a host for its whole max-age.
 */
import helmet from 'helmet';

type Directives = Record<string, string[]>;

const NOTHING: Directives = {
  'default-src': ["'none'"],
  'base-uri': ["'none'"],
  'form-action': ["'none'"],
  'frame-ancestors': ["'none'"],
};

const SWAGGER_UI: Directives = {
  ...NOTHING,
  'script-src': ["'self'"],
  'style-src': ["'self'", "'unsafe-inline'"],
  'img-src': ["'self'", 'data:'],
  'font-src': ["'self'", 'data:'],
  'connect-src': ["'self'"],
};

const policy = (directives: Directives) => helmet.contentSecurityPolicy({ useDefaults: false, directives });

/** Every answer's headers: nosniff, no framing, no referrer, same-origin resources, the API's CSP. */
export function securityHeaders() {
  return helmet({
    contentSecurityPolicy: { useDefaults: false, directives: NOTHING },
    strictTransportSecurity: false,
    xFrameOptions: { action: 'deny' },
  });
}

/** The policy of the /docs page (Swagger UI). */
export const docsPolicy = () => policy(SWAGGER_UI);
