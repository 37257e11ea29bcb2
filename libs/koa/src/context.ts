import type { Context, DefaultState, Middleware, Next } from 'koa';

/** What the shared middlewares put on `ctx.state`. */
export interface AppState extends DefaultState {
  requestId: string;
  /** Set by requireAuth (always) and optionalAuth (when a token was sent). */
  userId?: string;
}

export type AppContext = Context & { state: AppState };
export type AppMiddleware = Middleware<AppState>;
export type { Next };
