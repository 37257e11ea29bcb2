import type { Upstream } from './route-table';

/** Asks every upstream's /readyz, each bounded by `timeoutMs`; never throws. */
export async function checkUpstreams(
  targets: Record<Upstream, string>,
  timeoutMs = 1500,
): Promise<Record<Upstream, boolean>> {
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
  return Object.fromEntries(entries) as Record<Upstream, boolean>;
}
