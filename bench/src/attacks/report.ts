/** Scenario 11's report: a row per attack in the main table, and a section of its own. */
import { sayRate } from './bulk-import';
import type { AttacksReport } from './report-types';
import {
  BOUND,
  BULK,
  BULK_POSTS,
  BYSTANDER_REQUESTS,
  type BystanderRequest,
  RAMP_S,
  SETTLE_S,
  SUCCESS_GOAL_PCT,
} from './settings';
import { statusList } from './statuses';

/** One row per attack for the bench's table: scenario, measured, ratio, goal. */
export function attackRows(a: AttacksReport): [string, string, string, string][] {
  const rows: [string, string, string, string][] = [
    [
      `11 attacks, the bystander alone (${a.posts} posts)`,
      BYSTANDER_REQUESTS.map(
        (name) =>
          `${name} p50 ${a.without[name]?.p50} ms (p99 ${a.without[name]?.p99}), ${a.without[name]?.succeeded}% ok`,
      ).join('; '),
      '(baseline)',
      'the figures without attack',
    ],
  ];
  for (const x of a.attacks) {
    const worst = (names: BystanderRequest[]) => Math.max(...names.map((n) => x.bystander[n].ratio));
    rows.push([
      `11 attack: ${x.name}`,
      `bystander p50 without → with: ${BYSTANDER_REQUESTS.map(
        (name) =>
          `${name} ${x.bystander[name].p50Without} → ${x.bystander[name].p50With} ms (${x.bystander[name].ratio}×)`,
      ).join(
        '; ',
      )}; ${x.bystanderSucceededPct}% of its requests succeeded. Attacker: ${x.attacker.rps} rps, ${statusList(x.attacker.statuses)}. The one process: peak RSS ${x.memory.peakMb} MB (${x.memory.beforeMb} before), ${x.survived ? 'survived' : 'did not survive'}`,
      `reads worst ${worst(['read by id', 'note create', 'public list, page 1'])}×, login ${x.bystander.login.ratio}×, ${x.bystanderSucceededPct}% ok: goal ${x.goalMet ? 'met' : 'not met'}`,
      'reads ≤ 2×, login ≤ 3×, ≥ 99% ok',
    ]);
  }
  const b = a.bulkImport;
  if (b) {
    rows.push([
      '11 the import with the default settings, against the limits off',
      `${b.defaults.postsPerS} posts/s (${b.defaults.posts} in ${b.defaults.seconds} s) against ${b.limitsOff.postsPerS} posts/s (${b.limitsOff.posts} in ${b.limitsOff.seconds} s), this run`,
      `${b.ratio}×: goal ${b.goalMet ? 'met' : 'not met'}`,
      `≥ ${b.goalRatio}×`,
    ]);
  }
  return rows;
}

/** The whole of scenario 11, a table per attack. */
export function attackSection(a: AttacksReport): string {
  const lines = [
    '## 11 Attacks beside a bystander',
    '',
    `${a.posts} published posts; the gateway's limits on (${a.limits.rateLimit} requests and ${a.limits.authRateLimit} on /api/auth a ${a.limits.windowS} s window per address), every attacker within them. The bystander sends ${BYSTANDER_REQUESTS.map((n) => `${n} ${a.bystanderRates[n]}/s`).join(', ')}, and is measured for ${a.measureS} s alone, then beside each attack. Its logins ${a.bystanderDevice ? 'present the device token (`X-Device-Token`) its first login was answered, as a client that logged in here before does' : 'present no device token (identity answered none)'}. The one process's memory is its VmRSS, sampled every 100 ms from each attack's start until ${SETTLE_S} s after it. Goal: ${a.goal}, and the process survives.`,
    '',
  ];
  for (const x of a.attacks) {
    lines.push(
      `### ${x.name}: goal ${x.goalMet ? 'met' : 'not met'}`,
      '',
      `${x.what}. Attacker: ${x.attacker.sent} sent, ${x.attacker.rps} answered a second, p50 ${x.attacker.p50} ms; ${statusList(x.attacker.statuses)}.${x.detail ? ` ${x.detail.charAt(0).toUpperCase()}${x.detail.slice(1)}.` : ''}`,
      '',
      `The one process: RSS ${x.memory.beforeMb} MB before, peak ${x.memory.peakMb} MB, ${x.memory.afterMb} MB after (its peak since it started, VmHWM: ${x.memory.hwmMb} MB); ${x.survived ? 'it survived' : 'it did not survive'}.`,
      '',
      '| bystander request | p50 without | p50 with | ratio | bound | p99 without | p99 with | succeeded |',
      '|---|---|---|---|---|---|---|---|',
      ...BYSTANDER_REQUESTS.map((name) => {
        const b = x.bystander[name];
        return `| ${name} | ${b.p50Without} ms | ${b.p50With} ms | ${b.ratio}× | ≤ ${BOUND[name]}× | ${b.p99Without} ms | ${b.p99With} ms | ${b.succeededPct}% of ${b.sent} |`;
      }),
      '',
      `All the bystander's requests: ${x.bystanderSucceededPct}% succeeded (goal ≥ ${SUCCESS_GOAL_PCT}%).`,
      '',
    );
  }
  const b = a.bulkImport;
  if (b) {
    lines.push(
      `### The import, against the limits off: goal ${b.goalMet ? 'met' : 'not met'}`,
      '',
      `The same import (${BULK_POSTS} posts, ${BULK.concurrency} in flight, the same addresses and pace) alone on a system of its own with the limits off, right after the attacks: ${sayRate(b.limitsOff)}. With the default settings, above (the bystander beside it for its first ${a.measureS + RAMP_S} s): ${sayRate(b.defaults)}. Ratio ${b.ratio}× (goal ≥ ${b.goalRatio}×).`,
      '',
    );
  }
  return lines.join('\n');
}
