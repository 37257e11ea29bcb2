/**
 * Refreshes per session: at most REFRESH_LIMIT in a window of REFRESH_WINDOW_MS, counted by
 * identity (the gateway does not read bodies, and knows no session). A client refreshes about once
 * an access token's lifetime, per tab, and a retry or a second tab within the grace interval
 * counts too; far more is a loop or a stolen token being tried, and costs the database on every
 * call. Past the limit: 429 with Retry-After, before the session is read. Counted in this
 * process's memory (`@cs/koa` window-limit.ts): behind N replicas a session gets up to N times it.
 */
import { createWindowLimit, type WindowLimit } from '@cs/koa';

export const REFRESH_LIMIT = 30;
export const REFRESH_WINDOW_MS = 60_000;

export function createRefreshLimit(): WindowLimit {
  return createWindowLimit({ limit: REFRESH_LIMIT, windowMs: REFRESH_WINDOW_MS });
}

export type RefreshLimit = WindowLimit;
