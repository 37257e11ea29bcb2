/** The scale report's words from its figures: whether the machine was shared, and what limited each route. */
import type { Report } from '../report-json';
import { round } from '../stats';
import { TIERS } from './settings';

/** A warning when the machine was not ours alone: its load before the run, others' CPU during it. */
export function shared(r: Report): string[] {
  const others = (['read', 'write'] as const).flatMap((route) =>
    Object.values(r.scale.routes[route] as Record<string, Report>).map((x) => x.otherCores as number),
  );
  const most = Math.max(...others);
  if (r.machine.loadAverageBefore[0] < r.machine.cores / 2 && most < 0.2) return [];
  return [
    `> **The machine was shared during this run**: load average ${r.machine.loadAverageBefore[0]} at the start (${r.machine.cores} cores), and processes other than the measured ones kept up to ${most.toFixed(2)} cores busy during the loaded windows (the "others" column). Absolute figures are lower than on a quiet machine, and ratios noisier; each ratio still compares configurations loaded back to back.`,
    '',
  ];
}

/** The plain-language reading of the scale figures, from the figures themselves. */
export function reading(r: Report): string[] {
  const n = r.settings.replicas;
  const cores = r.machine.cores;
  const out = ['### Reading', ''];
  for (const route of ['read', 'write'] as const) {
    const one = r.scale.routes[route]['1'];
    const two = r.scale.routes[route][n];
    const ratio = r.scale.ratios[route];
    const top = (x: Report) =>
      Object.entries(x.cores as Record<string, number>)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 3)
        .map(([g, c]) => `${g} ${c.toFixed(2)}`)
        .join(', ');
    const saturated = (x: Report) => x.machineBusyCores >= 0.9 * cores;
    const gatewayOne = one.cores.gateway ?? 0;
    const why =
      saturated(one) && saturated(two)
        ? `the CPU: the machine was busy on ${one.machineBusyCores.toFixed(2)} and ${two.machineBusyCores.toFixed(2)} of its ${cores} cores, so the second replicas competed for the same cores as the first (the most: ${top(two)}; others' work ${two.otherCores.toFixed(2)})`
        : gatewayOne >= 0.85
          ? `at 1 replica, the gateway's event loop (${gatewayOne.toFixed(2)} of a core) while the machine was busy on ${one.machineBusyCores.toFixed(2)} of ${cores} cores; at ${n}, the machine on ${two.machineBusyCores.toFixed(2)}`
          : `neither the machine (busy on ${one.machineBusyCores.toFixed(2)} → ${two.machineBusyCores.toFixed(2)} of ${cores} cores) nor one event loop was full: the waits (database round trips) and the ${r.settings.connections} connections set the pace`;
    const db = (x: Report) => ((x.cores.ferretdb ?? 0) + (x.cores.postgres ?? 0)).toFixed(2);
    const systemCost = (x: Report) =>
      TIERS.reduce((sum, g) => sum + ((x.cpuMsPerRequest as Record<string, number>)[g] ?? 0), 0);
    const [costOne, costTwo] = [systemCost(one), systemCost(two)];
    out.push(
      `- **${route}**: ${one.rps.toFixed(0)} → ${two.rps.toFixed(0)} req/s (× ${ratio}). What limits it: ${why}. The database (FerretDB + PostgreSQL) took ${db(one)} → ${db(two)} cores; HAProxy ${(one.cores.haproxy ?? 0).toFixed(2)} → ${(two.cores.haproxy ?? 0).toFixed(2)}. The system's CPU per request went from ${costOne.toFixed(2)} to ${costTwo.toFixed(2)} ms (${costTwo >= costOne ? '+' : ''}${round((costTwo / costOne - 1) * 100, 0)}%): the price of twice the processes on the same cores (fewer requests per turn of each event loop, more switching between processes; not measured apart here). With the cores full, throughput follows the inverse: × ${round(costOne / costTwo, 2)} expected from the CPU alone, × ${ratio} measured.`,
    );
  }
  out.push(
    '',
    `On ${cores} cores, a second replica of every process cannot add CPU: it adds event loops, which helps only while one loop (not the machine) is the limit, and costs some context switching. The ratio on a machine with a core per replica is the estimate below, not this one.`,
    '',
  );
  return out;
}
