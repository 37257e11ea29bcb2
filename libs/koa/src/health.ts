import Router from '@koa/router';
import type { AppState } from './context';

export type ReadinessCheck = () => Promise<boolean>;

/** `GET /healthz`: the process is up. `GET /readyz`: every dependency answered in time. */
export function healthRoutes(checks: Record<string, ReadinessCheck>): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const results = await Promise.all(
      Object.entries(checks).map(async ([name, check]) => [name, await check().catch(() => false)] as const),
    );
    const ready = results.every(([, ok]) => ok);
    ctx.status = ready ? 200 : 503;
    ctx.body = ready
      ? { status: 'ready' }
      : { error: 'Not ready', checks: Object.fromEntries(results.map(([name, ok]) => [name, ok ? 'ok' : 'failing'])) };
  });
  return router;
}

/** Resolves false instead of hanging when a check takes longer than `ms`. */
export function withTimeout(check: ReadinessCheck, ms = 1000): ReadinessCheck {
  return () =>
    new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      check().then(
        (ok) => {
          clearTimeout(timer);
          resolve(ok);
        },
        () => {
          clearTimeout(timer);
          resolve(false);
        },
      );
    });
}
