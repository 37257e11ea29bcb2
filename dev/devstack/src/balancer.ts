/**
 * A real load balancer in front of replicas: Debian's HAProxy (HAPROXY_PATH names another), one
 * frontend per kind of process, each balancing its replicas by request. The scaled local topology
 * (system.ts) puts it in front of the gateways and in front of every service, as an internal
 * load balancer (a Kubernetes Service, an AWS internal ALB) sits between the tiers in production.
 *
 * What it does on failure, and why (HAProxy 2.6 `configuration.txt`, "retry-on" and
 * "http-request disable-l7-retry"):
 * - A connection refused (a replica killed, or draining after SIGTERM) is retried on another
 *   replica at once (`retry-on conn-failure`, `option redispatch 1`): nothing was sent, so this
 *   is safe for every method. Every request opens its own connection to a replica
 *   (`http-server-close`), so this is how a dead replica is always found, never by a request
 *   written onto a pooled connection that died with it.
 * - A connection that closes with no answer after the request was sent (a replica killed while
 *   it worked) is retried on another replica for idempotent methods only (`empty-response`, with
 *   L7 retries disabled for the rest). A POST caught that way may have been acted on, so it fails:
 *   HAProxy closes the client's kept-alive connection without an answer, as the replica itself
 *   would have ("abort_keep_alive": a client may retry what it knows to be safe). Behind the
 *   gateways, the gateway's proxy turns that into the API's JSON 502.
 * - Replicas are checked on `/readyz` every second and taken out while they fail it (after three
 *   failures in a row; back after two passes). When every replica of a kind fails it (their
 *   shared database is down, say) they are all used anyway (each server also stands as an
 *   unchecked backup, `option allbackups`): each then answers for itself, as one replica without
 *   a balancer would (JSON 503 where the database is needed, everything else served), instead of
 *   the balancer refusing the whole tier. Envoy calls this a panic threshold.
 * - Its own answers (no replica reachable, a replica gone mid-answer) are the API's JSON errors.
 * - The public frontend caps the connections of each client address (`connectionsPerAddress`), as
 *   a gateway does for clients that reach it directly: behind the balancer every connection a
 *   gateway sees is the balancer's. A stick table counts each address's open connections
 *   (`conn_cur`), and one past the cap is closed as it is accepted (`tcp-request connection
 *   reject`), before it is counted or holds anything. Not a 429 after its request, as a gateway
 *   answers: HAProxy would hold the connection until the request came (`timeout http-request`,
 *   10 s), and one address could fill the shared `maxconn` with connections it never uses.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { messages } from '@cs/errors';
import { type Child, canConnect, freePort, httpOk, spawnChild, waitFor } from './process';

export interface BalancedKind {
  /** The frontend's and backend's name: `gateway`, `posts`, … */
  name: string;
  /** Where the frontend listens. */
  host: string;
  port: number;
  /** The replicas' ports on 127.0.0.1, in order. */
  replicaPorts: number[];
  /**
   * Whether the frontend adds the client's address to `X-Forwarded-For` (the public frontend
   * does: the gateways' rate limits count per client, with `TRUST_PROXY=1`).
   */
  forwardFor?: boolean;
  /** Connections one client address may hold at once on this frontend; 0 or unset: no cap. */
  connectionsPerAddress?: number;
}

export interface BalancerOptions {
  dataDir: string;
  kinds: BalancedKind[];
  env?: NodeJS.ProcessEnv;
}

/** Per replica, what the balancer counted: requests sent to it, and whether its check passes. */
export interface ReplicaStats {
  requests: number;
  up: boolean;
}

export interface RunningBalancer {
  kind: string;
  child: Child;
  /** The frontend of one kind of process. */
  url(name: string): string;
  /** HAProxy's statistics page (`/stats;csv` for the figures). */
  statsUrl: string;
  /** `stats()['posts']` lists each posts replica in order (the checked server, not its backup). */
  stats(): Promise<Record<string, ReplicaStats[]>>;
  stop(): Promise<void>;
}

/** Methods HAProxy may send again after the replica took them (RFC 9110 §9.2.2), as the gateway does. */
const IDEMPOTENT = 'GET HEAD PUT DELETE OPTIONS';

const jsonError = (status: number, message: string) =>
  `  http-error status ${status} content-type application/json string ${JSON.stringify(JSON.stringify({ error: message }))}`;

/**
 * A connection from an address that already holds `max` is closed at once (and never counted);
 * the others are counted while they last. The frontends bind IPv4 addresses only (a `type ip`
 * table holds no IPv6 key).
 */
function capPerAddress(max: number): string[] {
  if (!Number.isInteger(max) || max < 0) throw new Error(`connections per address: ${max} is not a whole number`);
  if (max === 0) return [];
  return [
    '  stick-table type ip size 100k expire 30s store conn_cur',
    `  tcp-request connection reject if { src_conn_cur ge ${max} }`,
    '  tcp-request connection track-sc0 src',
  ];
}

export function haproxyConfig(kinds: BalancedKind[], statsPort: number): string {
  const lines = [
    'global',
    '  maxconn 4096',
    '  log stdout format raw local0',
    '',
    'defaults',
    '  mode http',
    // Only what went wrong: a failed or retried request, with its timings and termination state.
    '  log global',
    '  option httplog',
    '  option dontlog-normal',
    '  option dontlognull',
    '  timeout connect 1s',
    // Longer than any answer may take: the gateway gives up on a service after 15 s (UPSTREAM_TIMEOUT).
    '  timeout client 60s',
    '  timeout server 60s',
    // Longer than the idle time after which the gateway and Node's fetch retire a pooled socket
    // (4 s), so a client never writes a request onto a connection we are closing.
    '  timeout http-keep-alive 10s',
    '  timeout http-request 10s',
    // A new connection to a replica for every request: a killed replica is then a refused
    // connection, sent elsewhere whatever the method. A pooled one could already be dead when a
    // request is written onto it (the replica killed, or closing it as idle), and a POST that met
    // that could not be sent again. Loopback connections cost little (see bench/results/scale.md).
    '  option http-server-close',
    '  retries 3',
    '  option redispatch 1',
    '  retry-on conn-failure empty-response',
    '  option allbackups',
    // A check every second; out after 3 failures in a row, back after 2 passes. A check may take
    // 3 s: a gateway's /readyz asks every service, and on a busy machine a 1 s bound took healthy
    // gateways out of service now and then. Readiness is all checks decide: a dead replica is
    // found at once, by its refused connection.
    '  timeout check 3s',
    '  default-server inter 1s fall 3 rise 2',
    jsonError(502, messages.upstreamUnavailable),
    jsonError(503, messages.unavailable),
    jsonError(504, messages.upstreamTimeout),
  ];
  for (const kind of kinds) {
    lines.push(
      '',
      `frontend ${kind.name}`,
      `  bind ${kind.host}:${kind.port}`,
      ...capPerAddress(kind.connectionsPerAddress ?? 0),
      ...(kind.forwardFor ? ['  option forwardfor'] : []),
      `  default_backend ${kind.name}`,
      '',
      `backend ${kind.name}`,
      `  acl idempotent method ${IDEMPOTENT}`,
      '  http-request disable-l7-retry unless idempotent',
      '  option httpchk GET /readyz',
      '  http-check expect status 200',
      ...kind.replicaPorts.map((port, i) => `  server ${kind.name}-${i + 1} 127.0.0.1:${port} check`),
      ...kind.replicaPorts.map((port, i) => `  server ${kind.name}-${i + 1}-any 127.0.0.1:${port} backup`),
    );
  }
  lines.push('', 'listen stats', `  bind 127.0.0.1:${statsPort}`, '  stats enable', '  stats uri /stats', '');
  return lines.join('\n');
}

/** HAPROXY_PATH, else `haproxy` on PATH, else Debian's /usr/sbin/haproxy (not on a user's PATH). */
export function haproxyBin(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.HAPROXY_PATH) return env.HAPROXY_PATH;
  try {
    const found = execFileSync('sh', ['-c', 'command -v haproxy'], { encoding: 'utf8' }).trim();
    if (found) return found;
  } catch {}
  return existsSync('/usr/sbin/haproxy') ? '/usr/sbin/haproxy' : undefined;
}

export async function startBalancer({ dataDir, kinds, env = process.env }: BalancerOptions): Promise<RunningBalancer> {
  const command = haproxyBin(env);
  if (!command) throw new Error("haproxy is not installed (Debian's haproxy package, or HAPROXY_PATH)");
  const dir = join(dataDir, 'balancer');
  mkdirSync(dir, { recursive: true });
  const statsPort = await freePort();
  const configFile = join(dir, 'haproxy.cfg');
  writeFileSync(configFile, haproxyConfig(kinds, statsPort));
  // -db: in the foreground, so that our child is HAProxy itself and our signals reach it.
  const child = spawnChild({
    name: 'haproxy',
    command,
    args: ['-db', '-f', configFile],
    logFile: join(dataDir, 'logs', 'haproxy.log'),
  });
  const statsUrl = `http://127.0.0.1:${statsPort}/stats`;
  const listening = async () =>
    (await httpOk(statsUrl)) && (await Promise.all(kinds.map((k) => canConnect(k.port)))).every(Boolean);
  await waitFor('haproxy', listening, { child }).catch(async (err) => {
    await child.stop();
    throw err;
  });
  const byName = new Map(kinds.map((k) => [k.name, k]));
  return {
    kind: 'HAProxy (Debian)',
    child,
    statsUrl,
    url(name) {
      const kind = byName.get(name);
      if (!kind) throw new Error(`the balancer has no frontend ${name}`);
      return `http://127.0.0.1:${kind.port}`;
    },
    async stats() {
      return parseStats(await getText(`${statsUrl};csv`), kinds);
    },
    stop: async () => void (await child.stop()),
  };
}

/** HAProxy's CSV statistics: per backend, each checked server's request count and state. */
function parseStats(csv: string, kinds: BalancedKind[]): Record<string, ReplicaStats[]> {
  const [header = '', ...rows] = csv.trim().split('\n');
  const columns = header.replace(/^# /, '').split(',');
  const at = (name: string) => columns.indexOf(name);
  const result: Record<string, ReplicaStats[]> = {};
  for (const kind of kinds) result[kind.name] = kind.replicaPorts.map(() => ({ requests: 0, up: false }));
  for (const row of rows) {
    const cells = row.split(',');
    const backend = cells[at('pxname')] ?? '';
    const match = /^(.+)-(\d+)(-any)?$/.exec(cells[at('svname')] ?? '');
    const replicas = result[backend];
    if (!match || !replicas) continue;
    const replica = replicas[Number(match[2]) - 1];
    if (!replica) continue;
    // Requests sent to it, whether as the checked server or as its backup.
    replica.requests += Number(cells[at('req_tot')] || cells[at('stot')] || 0);
    if (!match[3]) replica.up = (cells[at('status')] ?? '').startsWith('UP');
  }
  return result;
}

function getText(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = get(url, { timeout: 2000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.once('end', () => resolve(text));
      res.once('error', reject);
    });
    req.once('timeout', () => req.destroy(new Error(`GET ${url}: no answer within 2 s`)));
    req.once('error', reject);
  });
}
