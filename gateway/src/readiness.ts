import type { ServiceFetch } from '@cs/lifecycle';
import type { Upstream } from './route-table';

export type Readiness = Record<Upstream, boolean>;

/** Asks every upstream's /readyz, each bounded by `timeoutMs`; never throws. */
async function checkUpstreams(
  targets: Record<Upstream, string>,
  fetch: ServiceFetch,
  timeoutMs: number,
): Promise<Readiness> {
  const entries = await Promise.all(
    Object.entries(targets).map(async ([name, url]) => {
      try {
        const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(timeoutMs) });
        await res.arrayBuffer();
        return [name, res.ok] as const;
      } catch {
        return [name, false] as const;
      }
    }),
  );
  return Object.fromEntries(entries) as Readiness;
}

/**
 * The gateway's /readyz answer, shared. Each upstream check fans out to that service's database
 * (and storage), so a storm of /readyz calls must not become a storm of checks: callers that
 * arrive while a check runs wait for it, and its result serves everyone for `freshMs` after it
 * finished. So at most one check per upstream per `freshMs` (plus the check's own duration)
 * reaches a service, however many callers there are; a probe polling every few seconds still
 * sees the state of the last second.
 */
export function sharedReadiness(
  targets: Record<Upstream, string>,
  fetch: ServiceFetch,
  { freshMs = 1000, timeoutMs = 1500 }: { freshMs?: number; timeoutMs?: number } = {},
): () => Promise<Readiness> {
  let running: Promise<Readiness> | undefined;
  let last: { at: number; result: Readiness } | undefined;
  return () => {
    if (last && Date.now() - last.at < freshMs) return Promise.resolve(last.result);
    running ??= checkUpstreams(targets, fetch, timeoutMs).then((result) => {
      last = { at: Date.now(), result };
      running = undefined;
      return result;
    });
    return running;
  };
}
