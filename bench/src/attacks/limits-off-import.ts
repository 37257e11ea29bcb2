import { join } from 'node:path';
import { startSystem, withDatabase } from '@cs/devstack';
import { LIMITS_OFF } from '../limits-off';
import { bulkImport, bulkImportS, type PublishRate, publishRate } from './bulk-import';
import type { AttackOptions } from './report-types';
import { postJson, runPaced } from './requests';
import { seedPosts } from './seed-posts';
import { BULK, BULK_POSTS, MEASURE_S, RAMP_S } from './settings';

/** The import of scenario 11, alone: a system like the attacks' with ATTACK_POSTS stored, the limits off. */
export async function importWithLimitsOff(o: AttackOptions): Promise<PublishRate> {
  const dbPrefix = `${o.dbPrefix}off_`;
  const system = await startSystem({
    dataDir: join(o.dataDir, 'limits-off'),
    mongoUrl: o.mongoUrl,
    storage: o.storage,
    jwtSecret: o.jwtSecret,
    dbPrefix,
    env: { LOG_LEVEL: 'warn', BCRYPT_COST: o.bcryptCost, ...LIMITS_OFF },
  });
  o.own(system);
  try {
    await seedPosts(withDatabase(o.mongoUrl, `${dbPrefix}posts`));
    const email = `publisher-off-${process.pid}@example.com`;
    const { token } = await postJson(`${system.gatewayUrl}/api/auth/register`, { email, password: 'bench-password' });
    const headers = { authorization: `Bearer ${String(token)}` };
    const r = await runPaced(o, {
      gateway: system.gatewayUrl,
      durationS: bulkImportS(RAMP_S + MEASURE_S + 1),
      seed: 1,
      streams: [bulkImport(headers, BULK.addresses, BULK_POSTS)],
    });
    return publishRate(r.attacker);
  } finally {
    await system.stop();
  }
}
