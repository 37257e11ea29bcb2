/**
 * The web client (gateway/web, built by Vite into dist/public) at `/`. Built assets carry a hash
 * in their names and are cached for a year; the page itself is revalidated on every load. The
 * page's Content-Security-Policy allows no inline script and no other origin's script or style;
 * it may connect anywhere, because signed storage links live on storage's own origin. Images
 * come from itself, `data:`, and `blob:` (a note's thumbnail, fetched from storage and shown from
 * its bytes by the page's own script).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express, { type Response, Router } from 'express';

const WEB_ROOT = join(__dirname, '..', 'public');

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  'connect-src *',
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** nosniff, no referrer and the rest come from the gateway's security headers (helmet). */
function setHeaders(res: Response, path: string): void {
  if (path.endsWith('.html')) {
    res.set('cache-control', 'no-cache');
    res.set('content-security-policy', CSP);
  } else {
    res.set('cache-control', 'public, max-age=31536000, immutable');
  }
}

/** Serves the built client; when it has not been built, `/` is the gateway's JSON 404 as before. */
export function webClient(root: string = WEB_ROOT): Router {
  const router = Router();
  if (!existsSync(join(root, 'index.html'))) return router;
  // Only `/` and `/assets/…` touch the disk: API paths never cost a file lookup.
  const options = { index: false, redirect: false, setHeaders } as const;
  const files = express.static(root, options);
  router.get(['/', '/index.html'], (req, res, next) => {
    req.url = '/index.html';
    files(req, res, next);
  });
  router.use('/assets', express.static(join(root, 'assets'), options));
  return router;
}
