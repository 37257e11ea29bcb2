import Router from '@koa/router';
import type { AppState } from './context';

export type ReadinessCheck = () => Promise<boolean>;

/** A sentence for the operator about something degraded but still serving; undefined when all is well. */
export type ReadinessNotice = () => string | undefined;

/**
 * `GET /healthz`: the process is up. `GET /readyz`: every dependency answered in time; `notices`
 * tell what is degraded without taking the process out of service.
 */
export function healthRoutes(
  checks: Record<string, ReadinessCheck>,
  notices: Record<string, ReadinessNotice> = {},
): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const results = await Promise.all(
      Object.entries(checks).map(async ([name, check]) => [name, await check().catch(() => false)] as const),
    );
    const ready = results.every(([, ok]) => ok);
    const said = Object.entries(notices).flatMap(([name, notice]) => {
      const text = notice();
      return text === undefined ? [] : [[name, text] as const];
    });
    ctx.status = ready ? 200 : 503;
    ctx.body = {
      ...(ready
        ? { status: 'ready' }
        : {
            error: 'Not ready',
            checks: Object.fromEntries(results.map(([name, ok]) => [name, ok ? 'ok' : 'failing'])),
          }),
      ...(said.length > 0 ? { notices: Object.fromEntries(said) } : {}),
    };
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
