/** Scenario 1, the gateway hop: a post by id through the gateway, straight to posts, and through a bare proxy. */
import type { BenchSystem } from '../bench-system';
import { interleave, load } from '../measure';
import { type Report, type Row, ratio } from '../report-json';
import { CONNECTIONS as C } from '../run-settings';

export async function gatewayHop({ gw, postsUrl, bareUrl, postPath }: BenchSystem) {
  const hop = await interleave([
    { name: 'gateway', run: () => load({ url: `${gw}${postPath}`, connections: C }) },
    { name: 'direct', run: () => load({ url: `${postsUrl}${postPath}`, connections: C }) },
    { name: 'bare proxy', run: () => load({ url: `${bareUrl}${postPath}`, connections: C }) },
  ]);
  return {
    ...hop,
    ratioGatewayToBareProxy: ratio(hop.gateway?.rps, hop['bare proxy']?.rps),
    ratioGatewayToDirect: ratio(hop.gateway?.rps, hop.direct?.rps),
    goal: 'gateway ≥ 0.8 × bare proxy',
  };
}

export function gatewayHopRows(hop: Report): Row[] {
  return [
    [
      '1 gateway hop',
      `gateway ${hop.gateway.rps.toFixed(0)} rps; bare proxy ${hop['bare proxy'].rps.toFixed(0)}; direct ${hop.direct.rps.toFixed(0)}`,
      `${hop.ratioGatewayToBareProxy} (vs direct ${hop.ratioGatewayToDirect})`,
      hop.goal,
    ],
  ];
}
