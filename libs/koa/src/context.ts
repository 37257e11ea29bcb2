import type { Context, DefaultState, Middleware, Next } from 'koa';

/** What the shared middlewares put on `ctx.state`. */
export interface AppState extends DefaultState {
  requestId: string;
  /** Set by requireAuth (always) and optionalAuth (when a token was sent). */
  userId?: string;
  /** Set by serverTiming: times `work` under `name` in the Server-Timing header. */
  timed?: <T>(name: string, work: Promise<T>) => Promise<T>;
}

export type AppContext = Context & { state: AppState };
export type AppMiddleware = Middleware<AppState>;
export type { Next };
