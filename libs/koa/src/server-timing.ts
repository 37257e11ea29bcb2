import type { AppMiddleware } from './context';

const ms = (since: bigint) => (Number(process.hrtime.bigint() - since) / 1e6).toFixed(2);

/**
 * `Server-Timing: db;dur=…, app;dur=…`: how long the database part of the request took, and the
 * whole request inside the service, so a client (or the benchmark) can tell the service's own
 * overhead from the database's time. A handler wraps its database work in `ctx.state.timed`.
 */
export function serverTiming(): AppMiddleware {
  return async function serverTiming(ctx, next) {
    const started = process.hrtime.bigint();
    const marks: string[] = [];
    ctx.state.timed = async (name, work) => {
      const t = process.hrtime.bigint();
      try {
        return await work;
      } finally {
        marks.push(`${name};dur=${ms(t)}`);
      }
    };
    await next();
    marks.push(`app;dur=${ms(started)}`);
    ctx.set('Server-Timing', marks.join(', '));
  };
}
