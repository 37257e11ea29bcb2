/**
 * The gateway and every service in one Node process: how `npm start` runs the system, and how a
 * team runs it for good when one machine is enough. `SERVICES` chooses what this process runs:
 * - `all` (the default): everything. The gateway listens on PORT; each service is hosted at
 *   `http://<name>.in-process` (@cs/lifecycle in-process.ts), where the gateway, the services'
 *   calls to one another and the revocation feed reach it in memory, without a socket;
 * - one name (`posts`, `gateway`…): that part alone, as its own entry runs it
 *   (services/<name>/dist/src/server.js, gateway/dist/src/server.js), one container each in Compose.
 *
 * How one process holds every part: all.ts. What one process gives up: a crash in one part takes
 * the others with it, and one event loop serves them all.
 */
import { runService } from '@cs/service';
import { SERVICES, startAll } from './all';

async function main(): Promise<void> {
  const target = (process.env.SERVICES ?? 'all').trim() || 'all';
  if (target === 'all') {
    // startAll has logged why it could not start.
    await startAll(process.env, { handleSignals: true }).catch(() => process.exit(1));
    return;
  }
  const one = SERVICES.find((s) => s.name === target);
  if (one) return runService(one);
  if (target === 'gateway') {
    await import('@cs/gateway');
    return;
  }
  const names = ['all', ...SERVICES.map((s) => s.name), 'gateway'].join(', ');
  process.stderr.write(`SERVICES must be one of ${names} (got "${target}")\n`);
  process.exit(1);
}

void main();
