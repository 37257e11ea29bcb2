/** What N replicas on N machines would reach, from the CPU-ms per request measured at 1 replica. */
import { round } from '../stats';
import { CORES } from './settings';

/**
 * N machines, each running one replica of every kind; one balancer and one database (FerretDB +
 * PostgreSQL) shared by all, each with as many cores as this machine. Each replica is one Node
 * event loop, so it can use one core at most: a kind saturates at N × 1000 / (its CPU-ms per
 * request). The shared tiers cap the total at cores × 1000 / (their CPU-ms per request).
 */
export function estimate(perRequest: Record<string, number>) {
  const costs = { gateway: perRequest.gateway ?? 0, posts: perRequest.posts ?? 0 };
  const [firstTier, firstCost] = Object.entries(costs).sort((a, b) => b[1] - a[1])[0] ?? ['gateway', 0];
  const perMachine = firstCost > 0 ? 1000 / firstCost : 0;
  const allNode = costs.gateway + costs.posts + (perRequest['identity, notes, files'] ?? 0);
  const dbCost = (perRequest.ferretdb ?? 0) + (perRequest.postgres ?? 0);
  const lbCost = perRequest.haproxy ?? 0;
  const ceilings: [string, number][] = [];
  if (dbCost > 0) ceilings.push(['database', (CORES * 1000) / dbCost]);
  if (lbCost > 0) ceilings.push(['balancer', (CORES * 1000) / lbCost]);
  const at = (n: number) => {
    let best: [string, number] = [`${firstTier} replicas`, n * perMachine];
    for (const c of ceilings) if (c[1] < best[1]) best = c;
    return { machines: n, rps: Math.round(best[1]), limitedBy: best[0] };
  };
  const dbCeiling = ceilings.find(([n]) => n === 'database')?.[1];
  return {
    firstTier,
    firstTierCpuMsPerRequest: round(firstCost, 3),
    perMachineRps: Math.round(perMachine),
    perOneCoreMachineRps: allNode > 0 ? Math.round(1000 / allNode) : 0,
    databaseCpuMsPerRequest: round(dbCost, 3),
    databaseCeilingRps: dbCeiling ? Math.round(dbCeiling) : undefined,
    balancerCpuMsPerRequest: round(lbCost, 3),
    balancerCeilingRps: lbCost > 0 ? Math.round((CORES * 1000) / lbCost) : undefined,
    machinesToDatabaseCeiling: dbCeiling && perMachine > 0 ? round(dbCeiling / perMachine, 1) : undefined,
    at: [1, 2, 4, 8, 16].map(at),
  };
}
