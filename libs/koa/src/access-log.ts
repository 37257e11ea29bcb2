import { accessLogger, type Logger } from '@cs/log';
import type { AppMiddleware } from './context';

/**
 * One line a request: never the body, the query string or any header. Its fields are fixed and
 * none is a credential: it is written without the redaction pass (`accessLogger`), so a field
 * added here must not be one either.
 */
export function accessLog({ logger: service }: { logger: Logger }): AppMiddleware {
  const logger = accessLogger(service);
  return async function accessLog(ctx, next) {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      if (logger.isLevelEnabled('info')) {
        logger.info({
          requestId: ctx.state.requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Number(process.hrtime.bigint() - started) / 1e6,
          userId: ctx.state.userId,
        });
      }
    }
  };
}
