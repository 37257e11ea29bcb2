/**
 * Work that runs in one of a few places (a bulkhead's, `@cs/koa` bulkhead.ts) sometimes has to wait
 * for something that is not work of its own: another process's turn to go stale after that process
 * was killed, which takes seconds (`@cs/mongo` turns.ts). Holding its place through such a wait
 * keeps out work that could run meanwhile, and a service with two places and two such waits would
 * serve no write at all. `waitAside` gives the place back for the wait, and takes one again after.
 *
 * The place goes with the work's async context, as a trace does, so the code that waits needs no
 * handle on the bulkhead it happens to run in. Outside any place, `waitAside` just waits.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** Runs `wait` with the caller's place given back, and resolves once the caller has one again. */
export type StepAside = <T>(wait: () => Promise<T>) => Promise<T>;

const places = new AsyncLocalStorage<StepAside>();

/** Runs `work` in a place, which `stepAside` lends out while `work` waits aside. */
export function inPlace<T>(stepAside: StepAside, work: () => Promise<T>): Promise<T> {
  return places.run(stepAside, work);
}

/** Waits for `wait` without the place the caller runs in, if it runs in one; resumes in a place. */
export function waitAside<T>(wait: () => Promise<T>): Promise<T> {
  const stepAside = places.getStore();
  return stepAside ? stepAside(() => places.exit(wait)) : wait();
}
