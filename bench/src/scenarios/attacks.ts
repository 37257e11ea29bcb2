/**
 * Scenario 11 (issue 37, part 1): no client, within our limits, slows everyone else. With
 * ATTACK_POSTS published posts stored, each attack runs beside a bystander, and the bystander's
 * figures are compared with its own, measured first without any attack.
 *
 * The system is one of its own (the embedded default, as `npm start` runs it), with the gateway's
 * default rate limits on (the rest of the bench turns them off): every attack stays within them,
 * and `withinLimits` refuses to run one that would not. Each client is a loopback source address
 * of its own (127.0.0.x), which is what the gateway counts per and the services take turns by.
 * Every rate and concurrency is a constant in attacks/settings.ts, and the pages and e-mails the
 * attackers pick come from a seeded generator (paced-load.ts), so a run can be repeated.
 *
 * Issue 46 added the attacks that found its faults, 5 to 10: a botnet of wrong logins (a fresh
 * address every 9 requests, 127.1.y.z), one account's unread streams with big updates
 * (unread-streams.ts), a resume flood over a seeded bus, a logout flood of one token, and a bulk
 * publisher. For each, the one process's resident memory is watched (peak-memory.ts), and whether
 * it is still there after.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type RunningSystem, startSystem, withDatabase } from '@cs/devstack';
import mongoose from 'mongoose';
import { prepareAccounts } from '../attacks/accounts';
import type { AttackerRun } from '../attacks/attack';
import { type PublishRate, publishRate } from '../attacks/bulk-import';
import { bystanderFigures, bystanderStreams } from '../attacks/bystander';
import { firstAttacks } from '../attacks/first-attacks';
import { importWithLimitsOff } from '../attacks/limits-off-import';
import { newAttacks } from '../attacks/newer-attacks';
import type { AttackFigures, AttackOptions, AttacksReport } from '../attacks/report-types';
import { runPaced } from '../attacks/requests';
import { seedPosts } from '../attacks/seed-posts';
import {
  ATTACK_POSTS,
  ATTACKS_GOAL,
  AUTH_RATE_LIMIT,
  BOUND,
  BULK_GOAL_RATIO,
  BULK_IMPORT,
  BYSTANDER,
  BYSTANDER_REQUESTS,
  MEASURE_S,
  ONLY_ATTACKS,
  RAMP_S,
  RATE_LIMIT,
  RATE_WINDOW_S,
  SETTLE_S,
  SUCCESS_GOAL_PCT,
  WARMUP_S,
} from '../attacks/settings';
import { checkPlan } from '../attacks/within-limits';
import { watchPeakMemory } from '../peak-memory';
import { runScript } from '../rounds';
import { processName } from '../rss';
import { round } from '../stats';

/**
 * Scenario 11: every attack beside the bystander, then, when the import ran, the same import alone
 * on a system of its own with the limits off. The defences should cost an import little (goal:
 * ≥ BULK_GOAL_RATIO of that rate): both are measured in this run, on this machine, side by side.
 */
export async function runAttacks(o: AttackOptions): Promise<AttacksReport> {
  const { imported, ...report } = await attackBesideBystander(o);
  if (!imported) return report;
  o.log('bench: 11 attacks: the same import, the limits off, on a system of its own');
  const limitsOff = await importWithLimitsOff(o);
  const ratio = round(imported.postsPerS / (limitsOff.postsPerS || Number.NaN), 2);
  return {
    ...report,
    bulkImport: { defaults: imported, limitsOff, ratio, goalRatio: BULK_GOAL_RATIO, goalMet: ratio >= BULK_GOAL_RATIO },
  };
}

async function attackBesideBystander(o: AttackOptions): Promise<AttacksReport & { imported?: PublishRate }> {
  const system: RunningSystem = await startSystem({
    dataDir: o.dataDir,
    mongoUrl: o.mongoUrl,
    storage: o.storage,
    jwtSecret: o.jwtSecret,
    dbPrefix: o.dbPrefix,
    env: {
      LOG_LEVEL: 'warn',
      BCRYPT_COST: o.bcryptCost,
      RATE_LIMIT: String(RATE_LIMIT),
      AUTH_RATE_LIMIT: String(AUTH_RATE_LIMIT),
      RATE_WINDOW: `${RATE_WINDOW_S}s`,
    },
  });
  o.own(system);
  // In one process, identity's log is read in process (its route for other processes is not
  // served): the log is counted in its collection, as scenario 12 does.
  const identityDb = await mongoose.createConnection(withDatabase(o.mongoUrl, `${o.dbPrefix}identity`)).asPromise();
  try {
    const gw = system.gatewayUrl;
    const { readId, tagTotals } = await seedPosts(withDatabase(o.mongoUrl, `${o.dbPrefix}posts`));
    o.log(`bench: 11 attacks: ${ATTACK_POSTS} posts stored`);
    const accounts = await prepareAccounts(gw);
    const { flipPath, flipHeaders, deviceToken } = accounts;
    const pid = system.processes.gateway.child.pid;

    const bystander = bystanderStreams(readId, accounts);
    const attackS = RAMP_S + MEASURE_S + 1;
    const all = [
      ...firstAttacks({ flipPath, flipHeaders, tagTotals }),
      ...newAttacks(
        {
          ...accounts,
          tagTotals,
          gateway: gw,
          revocationEntries: () => identityDb.collection('revocations').countDocuments(),
          runPaced: (spec) => runPaced(o, spec),
          runUnread: (spec) => runScript(o.node, o.dist, 'unread-streams.js', [JSON.stringify(spec)]),
        },
        attackS,
      ),
    ];
    const planned = all.filter((a) => !ONLY_ATTACKS || ONLY_ATTACKS.includes(a.name));
    if (planned.length === 0) throw new Error(`BENCH_ATTACKS=${ONLY_ATTACKS}: names none of ${all.map((a) => a.name)}`);
    checkPlan(bystander, planned, attackS);

    const measureBystander = (durationS = MEASURE_S) =>
      runPaced(o, { gateway: gw, durationS, seed: 1, streams: bystander });
    await measureBystander(WARMUP_S);
    o.log('bench: 11 attacks: the bystander alone');
    const without = await measureBystander();
    await sleep(SETTLE_S * 1000);

    const figures: AttackFigures[] = [];
    let imported: PublishRate | undefined;
    for (const [n, attack] of planned.entries()) {
      o.log(`bench: 11 attacks: ${attack.name}`);
      await attack.prepare?.();
      const memory = watchPeakMemory(pid);
      const durationS = attack.durationS ?? attackS;
      const seed = 100 * (n + 1);
      const attacker: Promise<AttackerRun> = attack.run
        ? attack.run(durationS, seed)
        : runPaced(o, { gateway: gw, durationS, seed, streams: attack.streams }).then((r) => ({ result: r.attacker }));
      await sleep(RAMP_S * 1000);
      const during = await measureBystander();
      const attackerRun = await attacker;
      const attackerResult = attackerRun.result;
      if (attack.name === BULK_IMPORT) imported = publishRate(attackerResult);
      await sleep(SETTLE_S * 1000);
      const peak = memory.stop();
      const survived =
        processName(pid) !== '' &&
        (await fetch(`${gw}/readyz`).then(
          (r) => r.ok,
          () => false,
        ));
      const detail = [attackerRun.detail, await attack.after?.(attackerRun).catch((err: Error) => err.message)]
        .filter(Boolean)
        .join('; ');

      const { each, succeededPct: bystanderSucceededPct } = bystanderFigures(without, during);
      figures.push({
        name: attack.name,
        what: attack.what,
        attacker: {
          rps: attackerResult?.rps ?? 0,
          sent: attackerResult?.sent ?? 0,
          p50: attackerResult?.p50 ?? 0,
          statuses: attackerResult?.statuses ?? {},
        },
        bystander: each,
        bystanderSucceededPct,
        detail: detail || undefined,
        memory: peak,
        survived,
        goalMet:
          survived &&
          bystanderSucceededPct >= SUCCESS_GOAL_PCT &&
          BYSTANDER_REQUESTS.every((name) => each[name].ratio <= BOUND[name]),
      });
      if (!survived) {
        o.log(`bench: 11 attacks: the one process did not survive ${attack.name}; the rest are not run`);
        break;
      }
    }
    return {
      posts: ATTACK_POSTS,
      measureS: MEASURE_S,
      limits: { rateLimit: RATE_LIMIT, authRateLimit: AUTH_RATE_LIMIT, windowS: RATE_WINDOW_S },
      bystanderRates: {
        'read by id': BYSTANDER.byIdPerS,
        'note create': BYSTANDER.notePerS,
        'public list, page 1': BYSTANDER.listPerS,
        login: round(BYSTANDER.loginPerS, 2),
      },
      bystanderDevice: Boolean(deviceToken),
      without,
      attacks: figures,
      goal: ATTACKS_GOAL,
      imported,
    };
  } finally {
    await identityDb.close();
    await system.stop();
  }
}
