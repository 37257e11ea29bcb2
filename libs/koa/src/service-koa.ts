/**
 * Koa, except that a response the app writes itself (`ctx.respond = false`: an event stream) is
 * not watched to its end.
 *
 * Koa watches every response from the moment it starts (`on-finished`, in `handleRequest`) and
 * hands what the watch sees, an error of the socket, to `ctx.onerror`. The watch keeps the whole
 * context until the response ends: about 4 kB, measured with heap snapshots, on each of thousands
 * of streams that last for hours. So the watch starts once the middleware is done, and only
 * for a response that Koa writes; a stream is its handler's to watch (event-stream.ts in
 * realtime). Our apps are silent and have no `error` listener, so nothing told by the watch of a
 * stream was ever seen.
 *
 * `handleRequest` is Koa's own seam for this (its maintainers point to it for request
 * lifecycle hooks), though its types leave it out. Koa's is called for every response it
 * writes, with the middleware already run: it sets 404 before running what it is given, so the
 * status the middleware left is put back first.
 */
import Koa from 'koa';
import type { AppState } from './context';

type KoaContext = Koa.ParameterizedContext<AppState>;
type Run = (ctx: KoaContext) => Promise<void>;

const koaHandleRequest = (Koa.prototype as unknown as { handleRequest(ctx: KoaContext, run: Run): Promise<void> })
  .handleRequest;

export class ServiceKoa extends Koa<AppState> {
  /** Called by Koa's `callback()` for each request, with the composed middleware. */
  handleRequest(ctx: KoaContext, middleware: Run): Promise<void> {
    // As Koa begins every response.
    ctx.res.statusCode = 404;
    const done = middleware(ctx);
    const koaAnswers = () => {
      const status = ctx.res.statusCode;
      return koaHandleRequest.call(this, ctx, () => {
        ctx.res.statusCode = status;
        return done;
      });
    };
    return done.then(() => (ctx.respond === false ? undefined : koaAnswers()), koaAnswers);
  }
}
