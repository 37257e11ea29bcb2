/**
 * Scenario 2, authentication cost: one read of the same published post through the same gateway
 * and posts service, with a token (verified by both, as every authenticated request is) and
 * without one (nothing to verify). The product has no switch that skips verification, so the
 * baseline is the route's anonymous form rather than a build with verification swapped for a
 * decode (the baseline before issue 32, on GET /api/posts/my-posts): its ratio also counts
 * reading the token, so it is the stricter of the two.
 */
import type { BenchSystem } from '../bench-system';
import { interleave, load } from '../measure';
import { type Report, type Row, ratio } from '../report-json';
import { CONNECTIONS as C } from '../run-settings';

/** The baseline, as the report states it (it changed in issue 32). */
const AUTH_BASELINE =
  'the same read without a token, through the same gateway and posts service (since issue 32; before, GET /api/posts/my-posts against builds with verification swapped for a decode)';

export async function authCost({ gw, postPath, auth }: BenchSystem) {
  const cost = await interleave([
    { name: 'verified', run: () => load({ url: `${gw}${postPath}`, headers: auth, connections: C }) },
    { name: 'unverified', run: () => load({ url: `${gw}${postPath}`, connections: C }) },
  ]);
  return {
    ...cost,
    ratio: ratio(cost.verified?.rps, cost.unverified?.rps),
    goal: '≥ 0.95',
    baseline: AUTH_BASELINE,
  };
}

export function authCostRows(authCost: Report): Row[] {
  return [
    [
      '2 authentication (GET /api/posts/:id with a token vs without)',
      `with a token ${authCost.verified.rps.toFixed(0)} rps; without ${authCost.unverified.rps.toFixed(0)}`,
      String(authCost.ratio),
      authCost.goal,
    ],
  ];
}
