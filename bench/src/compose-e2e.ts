/**
 * The Compose deployment's end-to-end check (run by scripts/compose-e2e.sh, which installs the
 * engine and the client, builds the stand-in images and tears everything down afterwards). On
 * the stack that docker-compose.yml describes, built and started for real, it shows:
 *  1. every image builds (size, build time) and runs as a non-root user (`id -u` inside);
 *  2. the stack comes up healthy (two gateways behind HAProxy, Redis counting their limits), the
 *     bucket set-up completes, and the host reaches only the balancer's and storage's published
 *     ports; the balancer's own errors are JSON;
 *  3. the whole user journey through those ports, bytes to storage and back included, and with
 *     the `ops` profile on, Prometheus scraping every process over the Compose network (metrics
 *     are published nowhere) and Jaeger holding traces of the gateway and the services;
 *  4. each service rebuilt and recreated alone under mixed traffic, without a failed request, the
 *     gateways too (a new pair started, then the old pair drained, behind the balancer);
 *  5. posts scaled to three replicas under that traffic: every replica serves, nothing fails;
 *  6. a killed process is restarted by Docker, and `down` then `up` keeps every record and object;
 *  7. Compose refuses to start without JWT_SECRET, and no secret is in any image or in `docker
 *     inspect` beyond the environment Compose was given;
 *  8. the auth limit holds across both gateways (exactly AUTH_RATE_LIMIT admitted, a client's own
 *     X-Forwarded-For buys no fresh bucket), fails closed while Redis is away and counts again
 *     once it is back; with no gateway left, the balancer answers a JSON 503.
 * Prints each figure as it comes, writes them to $E2E_OUT/compose.{json,md}, and exits 1 when a
 * check fails (after writing what it has).
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Compose, run, sleep } from './compose';
import { type Outcome, SERVICE_OF, Traffic } from './traffic';

const REPO_ROOT = join(__dirname, '..', '..', '..');
const GATEWAY = need('GATEWAY_URL');
const STORAGE = need('STORAGE_URL');
/** The `ops` profile's Prometheus and Jaeger, published on loopback. */
const PROMETHEUS = need('PROMETHEUS_URL');
const JAEGER = need('JAEGER_URL');
const OUT = process.env.E2E_OUT ?? join(REPO_ROOT, 'bench', 'results');
/** Every container's whole log, kept after the container is gone. */
const LOGS = process.env.E2E_LOGS ?? join(REPO_ROOT, '.data', 'compose-e2e', 'logs');
const STARTED_AT = Number(process.env.E2E_STARTED_AT ?? Date.now());
/** What stands in for MongoDB in this run (the script says). */
const DATABASE = process.env.E2E_DATABASE ?? 'mongo:7';

/** Ours, in the order they are built and deployed; storage-setup shares files' image layers. */
const BUILT = ['identity', 'posts', 'notes', 'files', 'storage-setup', 'gateway'] as const;
const BEHIND_GATEWAY = ['identity', 'posts', 'notes', 'files'] as const;
const ALL_RUNNING = ['mongo', 'storage', ...BEHIND_GATEWAY, 'gateway', 'redis', 'balancer'] as const;
/** docker-compose.yml's `deploy.replicas` for the gateway. */
const GATEWAYS = 2;
/** The auth limit the gateways get for step 8 (the traffic before it runs with the limits off). */
const AUTH_LIMIT = 10;
/** The optional `ops` profile, which the run turns on. */
const OPS = ['prometheus', 'jaeger'] as const;
/**
 * Container ports that must not be reachable from the host: the database, the services, metrics,
 * Redis, and the balancer's health port.
 */
const UNPUBLISHED_PORTS = [27017, 4001, 4002, 4003, 4004, 9464, 6379, 8405];

const compose = new Compose();
const project = need('COMPOSE_PROJECT_NAME');
interface ImageFigures {
  service: string;
  image: string;
  buildSeconds: number;
  sizeMB: number;
}

/** What the run found: written as compose.json, and as compose.md by `markdown`. */
interface Report {
  database: string;
  images?: ImageFigures[];
  uids?: Record<string, number>;
  [section: string]: unknown;
}

const report: Report = { database: DATABASE };
const failures: string[] = [];

function need(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (scripts/compose-e2e.sh sets it)`);
  return value;
}

function say(line: string): void {
  process.stdout.write(`compose-e2e: ${line}\n`);
}

/** Records a broken promise; the run goes on so that the report shows everything. */
function check(ok: boolean, what: string): void {
  if (!ok) {
    failures.push(what);
    say(`FAILED: ${what}`);
  }
}

const failed = (o: Outcome) => o.status < 200 || o.status >= 300;
const seconds = (ms: number) => Math.round(ms / 100) / 10;

/** The secrets that the run's env file gives Compose. */
function secrets(): Record<string, string> {
  const lines = readFileSync(compose.envFile, 'utf8').split('\n');
  const value = (key: string) =>
    lines
      .find((l) => l.startsWith(`${key}=`))
      ?.slice(key.length + 1)
      .trim() ?? '';
  return { JWT_SECRET: value('JWT_SECRET'), S3_SECRET_ACCESS_KEY: value('S3_SECRET_ACCESS_KEY') };
}

// 7 (first half): no container may start without the token secret.
async function refusesWithoutSecret(): Promise<void> {
  const missing = join(tmpdir(), `compose-e2e-${randomBytes(4).toString('hex')}.env`);
  const kept = readFileSync(compose.envFile, 'utf8')
    .split('\n')
    .filter((l) => !l.startsWith('JWT_SECRET='));
  writeFileSync(missing, kept.join('\n'));
  const env = { ...process.env };
  delete env.JWT_SECRET;
  const r = await run(compose.compose, ['--env-file', missing, 'up', '-d', '--no-build'], { env });
  rmSync(missing);
  const created = await compose.containers();
  const message = (r.stderr + r.stdout).trim().split('\n').pop() ?? '';
  report.withoutJwtSecret = { exitCode: r.code, message, containersCreated: created.length };
  say(`without JWT_SECRET: exit ${r.code}, "${message}", ${created.length} containers created`);
  check(
    r.code !== 0 && /JWT_SECRET/.test(message) && created.length === 0,
    'Compose must refuse to start without JWT_SECRET',
  );
}

// 1. Every image, built one after the other so the shared build stage is built once and reused.
async function buildImages(): Promise<void> {
  // The secrets lie in the project directory as `.env` while the images build, where a
  // developer's would: the layer search at the end then shows that a local .env reaches no image.
  const contextEnv = join(REPO_ROOT, '.env');
  const placed = !existsSync(contextEnv);
  if (placed) copyFileSync(compose.envFile, contextEnv);
  report.envFileInBuildContext = placed;
  const images: ImageFigures[] = [];
  try {
    for (const service of BUILT) {
      const started = Date.now();
      await compose.exec(['build', service]);
      const ms = Date.now() - started;
      const size = Number(
        (await compose.docker$(['image', 'inspect', '-f', '{{.Size}}', `${project}-${service}`])).trim(),
      );
      images.push({
        service,
        image: `${project}-${service}`,
        buildSeconds: seconds(ms),
        sizeMB: Math.round(size / 1e6),
      });
      say(`built ${service}: ${seconds(ms)} s, ${Math.round(size / 1e6)} MB`);
    }
  } finally {
    if (placed) rmSync(contextEnv);
  }
  report.images = images;
}

// 2. Up, healthy, and only the balancer's and storage's ports published (and, on loopback, the ops UIs).
async function up(): Promise<void> {
  const started = Date.now();
  await compose.exec(['up', '-d', '--wait']);
  report.upSeconds = seconds(Date.now() - started);
  say(`up and healthy in ${report.upSeconds} s`);

  const containers = await compose.containers();
  const setup = containers.find((c) => c.service === 'storage-setup');
  check(setup?.status === 'exited' && setup.exitCode === 0, 'the bucket set-up must complete (exit 0)');
  for (const service of ALL_RUNNING) {
    const c = containers.filter((x) => x.service === service);
    check(
      c.length > 0 && c.every((x) => x.status === 'running' && x.health === 'healthy'),
      `${service} must be running and healthy`,
    );
  }
  const gateways = containers.filter((c) => c.service === 'gateway' && c.status === 'running');
  check(gateways.length === GATEWAYS, `${GATEWAYS} gateways must run (got ${gateways.length})`);

  const published = Object.fromEntries(
    containers.filter((c) => Object.keys(c.published).length > 0).map((c) => [c.service, c.published]),
  );
  report.published = published;
  say(`published: ${JSON.stringify(published)}`);
  check(
    JSON.stringify(Object.keys(published).sort()) === JSON.stringify(['balancer', 'jaeger', 'prometheus', 'storage']),
    'only the balancer and storage (and the ops profile’s UIs) may publish ports',
  );
  for (const service of OPS) {
    const addresses = Object.values(published[service] ?? {}).flat();
    check(
      addresses.length > 0 && addresses.every((a) => String(a).startsWith('127.0.0.1:')),
      `${service} must publish on loopback only (got ${JSON.stringify(addresses)})`,
    );
  }

  const reach: Record<string, string> = {};
  for (const [name, url] of [
    ['gateway /readyz', `${GATEWAY}/readyz`],
    ['storage /healthz', `${STORAGE}/healthz`],
  ] as const) {
    const res = await fetch(url).catch(() => undefined);
    reach[name] = res ? String(res.status) : 'unreachable';
    check(res?.status === 200, `the host must reach ${name}`);
  }
  for (const port of UNPUBLISHED_PORTS) {
    reach[`127.0.0.1:${port}`] = await tcpProbe(port);
    check(reach[`127.0.0.1:${port}`] === 'refused', `nothing may answer on 127.0.0.1:${port}`);
  }
  report.hostReaches = reach;
  say(`the host reaches: ${JSON.stringify(reach)}`);

  // Recorded, not held against the run: a request HAProxy 2.6 refuses while parsing it (a header
  // line without a colon) gets its built-in HTML 400, whatever the configuration says. Its H1
  // layer answers those before any error setting applies (haproxy/haproxy#3032, fixed in 3.3 and
  // meant for 3.2). The errors it answers for a parsed request (no gateway left: 8b) are JSON.
  report.balancerMalformed = await rawRequest('GET / HTTP/1.1\r\nHost: e2e\r\nno colon here\r\n\r\n');
  say(`the balancer's answer to a malformed request: ${JSON.stringify(report.balancerMalformed)}`);

  const users: Record<string, number> = {};
  for (const c of containers.filter((x) => x.status === 'running')) {
    users[c.service] = Number((await compose.docker$(['exec', c.name, 'id', '-u'])).trim());
  }
  report.uids = users;
  say(`id -u: ${JSON.stringify(users)}`);
  for (const service of [...BEHIND_GATEWAY, 'gateway']) check(users[service] !== 0, `${service} must not run as root`);
}

const isErrorBody = (text: string) => {
  try {
    return typeof (JSON.parse(text) as { error?: unknown }).error === 'string';
  } catch {
    return false;
  }
};

/** Sends `request` as it is to the published port, and reads the answer's status, type and body. */
function rawRequest(request: string): Promise<{ status: number; contentType: string; body: string }> {
  const { hostname, port } = new URL(GATEWAY);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), timeout: 5000 });
    const chunks: Buffer[] = [];
    socket.once('connect', () => socket.write(request));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.once('timeout', () => socket.destroy(new Error('no answer within 5 s')));
    socket.once('error', reject);
    socket.once('close', () => {
      const text = Buffer.concat(chunks).toString();
      const [head = '', body = ''] = text.split('\r\n\r\n');
      resolve({
        status: Number(head.split(' ')[1] ?? 0),
        contentType: /^content-type:\s*(.*)$/im.exec(head)?.[1]?.trim() ?? '',
        body,
      });
    });
  });
}

function tcpProbe(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, timeout: 2000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve('open');
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('timeout');
    });
    socket.once('error', (err: NodeJS.ErrnoException) =>
      resolve(err.code === 'ECONNREFUSED' ? 'refused' : String(err.code)),
    );
  });
}

interface Api {
  status: number;
  body: Record<string, unknown>;
}

async function api(
  path: string,
  { method = 'GET', token, body }: { method?: string; token?: string; body?: unknown } = {},
): Promise<Api> {
  const res = await fetch(`${GATEWAY}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

function expectStatus(r: Api, status: number, what: string): Api {
  if (r.status !== status) throw new Error(`${what}: wanted ${status}, got ${r.status} ${JSON.stringify(r.body)}`);
  return r;
}

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

interface Kept {
  email: string;
  password: string;
  postId: string;
  postTitle: string;
  noteId: string;
  bytesSha: string;
}

/** Uploads bytes through a link the API gave, to the address in the link, with its headers. */
async function upload(token: string, bytes: Buffer, filename: string): Promise<string> {
  const link = expectStatus(
    await api('/api/upload-url', {
      method: 'POST',
      token,
      body: { contentType: 'image/png', filename, size: bytes.length },
    }),
    200,
    'upload link',
  ).body as { url: string; key: string; headers: Record<string, string> };
  check(new URL(link.url).origin === STORAGE, `the upload link must name the published storage address (${link.url})`);
  const put = await fetch(link.url, { method: 'PUT', headers: link.headers, body: bytes });
  if (!put.ok) throw new Error(`PUT to storage: ${put.status} ${await put.text()}`);
  return link.key;
}

/** Uploads `bytes` and creates a note that holds them; returns the note's id. */
async function noteWithFile(token: string, bytes: Buffer, title: string): Promise<string> {
  const attachmentKey = await upload(token, bytes, `${title}.png`);
  const note = expectStatus(
    await api('/api/notes', { method: 'POST', token, body: { title, body: 'with a file', attachmentKey } }),
    201,
    `create note "${title}"`,
  ).body;
  return String(note._id ?? note.id);
}

async function download(token: string, noteId: string): Promise<{ url: string; bytes: Buffer }> {
  const { url } = expectStatus(await api(`/api/notes/${noteId}/attachment`, { token }), 200, 'download link').body as {
    url: string;
  };
  check(new URL(url).origin === STORAGE, `the download link must name the published storage address (${url})`);
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET from storage: ${res.status}`);
  return { url, bytes: Buffer.from(await res.arrayBuffer()) };
}

// 3. The user journey, through the published ports only.
async function journey(): Promise<Kept> {
  const started = Date.now();
  const tag = `e2e${randomBytes(3).toString('hex')}`;
  const email = `${tag}@example.com`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  expectStatus(await api('/api/auth/register', { method: 'POST', body: { email, password } }), 201, 'register');
  const token = expectStatus(await api('/api/auth/login', { method: 'POST', body: { email, password } }), 200, 'login')
    .body.token as string;

  const postTitle = `Compose journey ${tag}`;
  const post = expectStatus(
    await api('/api/posts', {
      method: 'POST',
      token,
      body: { title: postTitle, body: 'Written through the gateway.', tags: [tag] },
    }),
    201,
    'create post',
  ).body;
  const postId = String(post._id ?? post.id);
  expectStatus(
    await api(`/api/posts/${postId}`, { method: 'PUT', token, body: { status: 'published' } }),
    200,
    'publish',
  );
  const found = expectStatus(await api(`/api/posts?tag=${tag}`), 200, 'find by tag').body.posts as { title: string }[];
  check(found.length === 1 && found[0]?.title === postTitle, 'the published post must be found by its tag');

  // One note whose attachment is deleted with it, and one kept for the persistence check.
  const gone = randomBytes(64 * 1024);
  const goneId = await noteWithFile(token, gone, 'gone');
  const fetched = await download(token, goneId);
  check(sha256(fetched.bytes) === sha256(gone), 'the downloaded bytes must be the uploaded ones');
  const kept = randomBytes(200 * 1024);
  const keptId = await noteWithFile(token, kept, 'kept');

  const deletedAt = Date.now();
  expectStatus(await api(`/api/notes/${goneId}`, { method: 'DELETE', token }), 204, 'delete note');
  let objectGoneMs: number | undefined;
  while (Date.now() - deletedAt < 60_000) {
    const res = await fetch(fetched.url);
    await res.arrayBuffer();
    if (res.status === 404) {
      objectGoneMs = Date.now() - deletedAt;
      break;
    }
    await sleep(200);
  }
  check(objectGoneMs !== undefined, 'the deleted note’s object must be gone within a minute');
  report.journey = {
    seconds: seconds(Date.now() - started),
    uploadedBytes: gone.length + kept.length,
    bytesIdentical: sha256(fetched.bytes) === sha256(gone),
    objectGoneAfterDeleteSeconds: objectGoneMs === undefined ? null : seconds(objectGoneMs),
  };
  say(`journey: ${JSON.stringify(report.journey)}`);
  return { email, password, postId, postTitle, noteId: keptId, bytesSha: sha256(kept) };
}

/**
 * An account deleted in the deployment: identity reaches posts, notes and files by their service
 * names, and the account's post and its note's object are gone within a minute.
 */
async function accountDeletion(): Promise<void> {
  const started = Date.now();
  const email = `gone${randomBytes(3).toString('hex')}@example.com`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const token = expectStatus(
    await api('/api/auth/register', { method: 'POST', body: { email, password } }),
    201,
    'register',
  ).body.token as string;
  const post = expectStatus(
    await api('/api/posts', { method: 'POST', token, body: { title: 'Soon gone', body: 'Deleted with its account.' } }),
    201,
    'create post',
  ).body;
  const noteId = await noteWithFile(token, randomBytes(1024), 'gone with the account');
  const { url } = await download(token, noteId);

  const deletedAt = Date.now();
  expectStatus(await api('/api/auth/account', { method: 'DELETE', token, body: { password } }), 204, 'delete account');
  let goneMs: number | undefined;
  while (Date.now() - deletedAt < 60_000) {
    const [postRes, objectRes] = await Promise.all([api(`/api/posts/${String(post._id)}`, { token }), fetch(url)]);
    await objectRes.arrayBuffer();
    if (postRes.status === 404 && objectRes.status === 404) {
      goneMs = Date.now() - deletedAt;
      break;
    }
    await sleep(200);
  }
  check(goneMs !== undefined, 'a deleted account’s post and object must be gone within a minute');
  const refused = await api('/api/notes', { method: 'POST', token, body: { title: 'after' } });
  check(refused.status === 401, `a deleted account’s token must write nothing (got ${refused.status})`);
  report.accountDeletion = {
    seconds: seconds(Date.now() - started),
    goneAfterDeleteSeconds: goneMs === undefined ? null : seconds(goneMs),
    writeAfterwards: refused.status,
  };
  say(`account deletion: ${JSON.stringify(report.accountDeletion)}`);
}

// 5b. Operations (profile `ops`): Prometheus scrapes every process over the Compose network, and
// counted what the journey sent; Jaeger holds traces from the gateway and the services behind it.
async function operations(): Promise<void> {
  const query = async (promql: string) => {
    const res = await fetch(`${PROMETHEUS}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await res.json()) as {
      data: { result: { metric: Record<string, string>; value: [number, string] }[] };
    };
    return body.data.result;
  };
  const started = Date.now();
  let up: Record<string, number> = {};
  let requests = 0;
  let services: string[] = [];
  let alerts: { name: string; health: string }[] = [];
  // Prometheus scrapes and evaluates every 15 s, and Jaeger's batches arrive within seconds.
  while (Date.now() - started < 90_000) {
    up = Object.fromEntries((await query('up')).map((s) => [s.metric.job ?? '?', Number(s.value[1])]));
    requests = Number(
      (await query('sum(http_server_request_duration_seconds_count{job="gateway", route!="other"})'))[0]?.value[1] ?? 0,
    );
    const jaeger = await fetch(`${JAEGER}/api/services`).then((r) => r.json() as Promise<{ data: string[] | null }>);
    services = (jaeger.data ?? []).sort();
    const rules = await fetch(`${PROMETHEUS}/api/v1/rules`).then(
      (r) => r.json() as Promise<{ data: { groups: { rules: { name: string; health: string }[] }[] } }>,
    );
    alerts = rules.data.groups.flatMap((g) => g.rules);
    const everyoneUp = [...BEHIND_GATEWAY, 'gateway'].every((job) => up[job] === 1);
    const traced = ['gateway', 'notes', 'files'].every((s) => services.includes(s));
    // A rule's health is `unknown` until its first evaluation (every 15 s).
    const evaluated = alerts.length > 0 && alerts.every((r) => r.health !== 'unknown');
    if (everyoneUp && requests > 0 && traced && evaluated) break;
    await sleep(1000);
  }
  for (const job of [...BEHIND_GATEWAY, 'gateway'])
    check(up[job] === 1, `Prometheus must scrape ${job} (up = ${up[job]})`);
  check(requests > 0, 'Prometheus must have counted the gateway’s requests');
  for (const s of ['gateway', 'notes', 'files']) check(services.includes(s), `Jaeger must hold traces from ${s}`);
  check(alerts.length === 5 && alerts.every((r) => r.health === 'ok'), 'the five alert rules must load and evaluate');
  report.operations = {
    seconds: seconds(Date.now() - started),
    up,
    gatewayRequestsCounted: requests,
    tracedServices: services,
    alertRules: alerts.map((r) => `${r.name} (${r.health})`),
  };
  say(`operations: ${JSON.stringify(report.operations)}`);
}

/** Waits for the gateway's /readyz to answer 200. */
async function gatewayReady(timeoutMs = 60_000): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    const res = await fetch(`${GATEWAY}/readyz`).catch(() => undefined);
    await res?.arrayBuffer();
    if (res?.status === 200) return Date.now() - started;
    await sleep(200);
  }
  throw new Error(`the gateway's /readyz did not answer 200 within ${timeoutMs} ms`);
}

function describeFailures(outcomes: readonly Outcome[]): string[] {
  return outcomes
    .filter(failed)
    .map((o) => `${new Date(o.startedAt).toISOString()} ${o.op} → ${o.status || o.error} after ${o.ms} ms`);
}

/**
 * The gateways, redeployed without a moment with none: `up --build gateway` would replace every
 * replica at once (Compose recreates a service's containers in parallel, each stopped before its
 * successor starts), and the balancer would have nobody to send to. So: the new image built, as
 * many new replicas started beside the old ones (`--no-recreate` leaves those as they are) and
 * healthy, then `up` at the file's count, which removes the outdated replicas first: each drains
 * (SIGTERM) while the new ones serve.
 */
async function rollGateways(revision: string): Promise<void> {
  await compose.exec(['build', 'gateway'], { REVISION: revision });
  await compose.exec(['up', '-d', '--no-deps', '--no-recreate', '--scale', `gateway=${GATEWAYS * 2}`, 'gateway'], {
    REVISION: revision,
  });
  await compose.waitHealthy('gateway', GATEWAYS * 2);
  await compose.exec(['up', '-d', '--no-deps', 'gateway'], { REVISION: revision });
}

/** The balancer's log lines since `sinceMs` for requests it had to resend, and how many it logged. */
async function balancerResends(sinceMs: number): Promise<{ logged: number; resent: string[] }> {
  const lines = (await compose.logs((await compose.containers('balancer'))[0]?.name ?? '', sinceMs)).filter((l) =>
    l.includes('"balancer":"request"'),
  );
  return { logged: lines.length, resent: lines.filter((l) => !l.includes('"retries":"0"')) };
}

// 4. Each service rebuilt and recreated alone, under traffic.
async function deploys(traffic: Traffic): Promise<void> {
  const rows: Record<string, unknown>[] = [];
  let revision = 0;
  for (const service of [...BEHIND_GATEWAY, 'gateway'] as const) {
    revision += 1;
    const before = await compose.containers(service);
    const started = Date.now();
    if (service === 'gateway') await rollGateways(`e2e-deploy-${revision}`);
    else await compose.exec(['up', '-d', '--no-deps', '--build', service], { REVISION: `e2e-deploy-${revision}` });
    const after = await compose.waitHealthy(service, service === 'gateway' ? GATEWAYS : 1);
    const healthyAt = Date.now();
    await sleep(2000);
    const during = traffic.between(started, Date.now());
    const mine = during.filter((o) => service === 'gateway' || SERVICE_OF[o.op] === service);
    const labels = await Promise.all(
      after.map(async (c) =>
        (
          await compose.docker$([
            'inspect',
            '-f',
            '{{index .Config.Labels "org.opencontainers.image.revision"}}',
            c.name,
          ])
        ).trim(),
      ),
    );
    const resends = await balancerResends(started);
    const row = {
      service,
      recreated: after.every((a) => !before.some((b) => b.id === a.id)),
      revision: [...new Set(labels)].join(', '),
      upSeconds: seconds(healthyAt - started),
      requests: during.length,
      ofThisService: mine.length,
      failed: during.filter(failed).length,
      slowestMs: Math.max(0, ...mine.map((o) => o.ms)),
      // Requests the balancer resent to another gateway (or the same one) and then answered.
      balancerResent: resends.resent.length,
      failures: describeFailures(during),
    };
    rows.push(row);
    say(`deployed ${service}: ${JSON.stringify({ ...row, failures: row.failures.length })}`);
    for (const f of row.failures) say(`  failed: ${f}`);
    for (const r of resends.resent.slice(0, 10)) say(`  resent by the balancer: ${r}`);
    check(
      row.recreated && labels.every((l) => l === `e2e-deploy-${revision}`),
      `${service} must run the newly built image`,
    );
    check(row.failed === 0, `no request may fail while ${service} is redeployed`);
  }
  report.deploys = rows;
}

/** How many requests each replica of a service logged since `sinceMs` (health checks aside). */
async function servedPerReplica(service: string, sinceMs: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const c of (await compose.containers(service)).filter((x) => x.status === 'running')) {
    counts[c.name] = (await compose.logs(c.name, sinceMs)).filter(
      (l) => l.includes('"requestId"') && l.includes('"status"') && !/"path":"\/(healthz|readyz)"/.test(l),
    ).length;
  }
  return counts;
}

// 5. Scale-out under the same traffic.
async function scale(traffic: Traffic): Promise<void> {
  const started = Date.now();
  await compose.exec(['up', '-d', '--no-deps', '--scale', 'posts=3', 'posts']);
  await compose.waitHealthy('posts', 3);
  const scaledAt = Date.now();
  await sleep(20_000);
  const perReplica = await servedPerReplica('posts', scaledAt);
  const downAt = Date.now();
  await compose.exec(['up', '-d', '--no-deps', '--scale', 'posts=1', 'posts']);
  await compose.waitHealthy('posts', 1);
  await sleep(2000);
  const during = traffic.between(started, Date.now());
  report.scale = {
    replicas: 3,
    scaleUpSeconds: seconds(scaledAt - started),
    servedPerReplicaIn20s: perReplica,
    scaleDownSeconds: seconds(Date.now() - 2000 - downAt),
    requests: during.length,
    failed: during.filter(failed).length,
    failures: describeFailures(during),
  };
  say(`scale: ${JSON.stringify(report.scale)}`);
  const counts = Object.values(perReplica);
  check(counts.length === 3 && counts.every((n) => n > 0), 'every posts replica must serve requests');
  check(during.filter(failed).length === 0, 'no request may fail while posts scales to 3 and back');
}

// 6a. A killed process comes back.
async function killAndRestart(): Promise<void> {
  const [before] = await compose.waitHealthy('posts');
  if (!before) throw new Error('no posts container');
  const killedAt = Date.now();
  // The container's main process, killed outright from the host (a crash; inside the container
  // it is PID 1, which no signal from within can kill).
  process.kill(before.pid, 'SIGKILL');
  for (;;) {
    const [now] = await compose.containers('posts');
    if (now && now.restartCount > before.restartCount && now.status === 'running') break;
    if (Date.now() - killedAt > 60_000) throw new Error('Docker did not restart the killed posts process');
    await sleep(100);
  }
  const restartedAt = Date.now();
  const readyAfter = await gatewayReady();
  const [after] = await compose.containers('posts');
  report.kill = {
    service: 'posts',
    restartCount: after?.restartCount,
    restartedAfterSeconds: seconds(restartedAt - killedAt),
    gatewayReadyAfterSeconds: seconds(restartedAt - killedAt + readyAfter),
  };
  say(`kill: ${JSON.stringify(report.kill)}`);
  check(
    after?.id === before.id && (after?.restartCount ?? 0) > before.restartCount,
    'Docker must restart the killed process in its container',
  );
}

// 6b. down (volumes kept) and up: everything is still there.
async function persistence(kept: Kept, traffic: Traffic): Promise<void> {
  await compose.exec(['down']);
  const left = await compose.containers();
  check(left.length === 0, '`down` must remove every container');
  const started = Date.now();
  // From here on the gateways have an auth limit, for step 8; the traffic is over, and the one
  // login below is long forgotten by then (step 8 starts with an empty Redis).
  await compose.exec(['up', '-d', '--wait'], limitsOn);
  await gatewayReady();
  const upSeconds = seconds(Date.now() - started);

  const login = await api('/api/auth/login', { method: 'POST', body: { email: kept.email, password: kept.password } });
  check(login.status === 200, `the journey's user must still log in (got ${login.status})`);
  const token = login.body.token as string;
  const post = await api(`/api/posts/${kept.postId}`);
  check(post.status === 200 && post.body.title === kept.postTitle, 'the published post must still be there');
  const { bytes } = await download(token, kept.noteId);
  check(sha256(bytes) === kept.bytesSha, 'the kept note’s object must still hold the same bytes');
  const verified = await traffic.verify();
  report.persistence = {
    upAgainSeconds: upSeconds,
    loginStatus: login.status,
    postStatus: post.status,
    objectIdentical: sha256(bytes) === kept.bytesSha,
    trafficWritesChecked: verified.checked,
    problems: verified.problems,
  };
  say(`after down and up: ${JSON.stringify(report.persistence)}`);
  check(verified.problems.length === 0, 'every write the traffic got a 2xx for must still read back');
}

/** What the gateways get from the client's environment (which Compose prefers to the env file). */
// The general limit is on too, so that reads with Redis away show it failing open; high enough
// that reading back every write of the traffic stays under it.
const limitsOn = { AUTH_RATE_LIMIT: String(AUTH_LIMIT), RATE_LIMIT: '100000', RATE_WINDOW: '10m' };

/** An auth request that costs identity nothing (no bcrypt, no per-account count): a 400. */
async function authRequest(
  headers: Record<string, string> = {},
): Promise<{ status: number; retryAfter: string; body: string }> {
  const res = await fetch(`${GATEWAY}/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: '{}',
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after') ?? '', body: await res.text() };
}

/** How many auth requests each running gateway logged since `sinceMs`. */
async function authServedPerGateway(sinceMs: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const c of (await compose.containers('gateway')).filter((x) => x.status === 'running')) {
    counts[c.name] = (await compose.logs(c.name, sinceMs)).filter(
      (l) => l.includes('"requestId"') && l.includes('"path":"/api/auth/register"'),
    ).length;
  }
  return counts;
}

// 8. The shared limits, through the balancer: Redis away and back, then the auth limit exactly.
async function sharedLimits(): Promise<void> {
  const started = Date.now();
  const [redis] = await compose.containers('redis');
  if (!redis) throw new Error('no redis container');
  const read = async () => {
    const res = await fetch(`${GATEWAY}/api/posts`, { signal: AbortSignal.timeout(10_000) });
    await res.arrayBuffer();
    return res.status;
  };

  // Redis killed: auth fails closed (JSON 503, Retry-After), the rest of the API is served.
  await compose.exec(['kill', 'redis']);
  let away = await authRequest();
  for (let i = 0; i < 50 && away.status !== 503; i++) {
    await sleep(100);
    away = await authRequest();
  }
  const readWhileAway = await read();
  const [killed] = await compose.containers('redis');
  check(killed?.status === 'exited', `Redis must stay down while it is checked (it is ${killed?.status})`);
  check(
    away.status === 503 && away.retryAfter !== '' && isErrorBody(away.body),
    `with Redis away, auth must answer a JSON 503 with Retry-After (got ${away.status} ${away.body})`,
  );
  check(readWhileAway === 200, `with Redis away, reads must be served (got ${readWhileAway})`);

  // Back (the same container, an empty Redis): counting again, from a fresh window. Every auth
  // answer from here on that is not a 429 was admitted and counted.
  const backAt = Date.now();
  await compose.exec(['start', 'redis']);
  await compose.waitHealthy('redis');
  const admittedStatuses: number[] = [];
  let first = await authRequest();
  while (first.status === 503 && Date.now() - backAt < 30_000) {
    await sleep(100);
    first = await authRequest();
  }
  const countingAgainMs = Date.now() - backAt;
  const answers = [first, ...(await Promise.all(Array.from({ length: 2 * AUTH_LIMIT }, () => authRequest())))];
  for (const a of answers) if (a.status !== 429) admittedStatuses.push(a.status);
  const refused = answers.filter((a) => a.status === 429);
  // The same client naming another address in X-Forwarded-For: still the same, spent bucket.
  const spoofed = await Promise.all(
    Array.from({ length: 3 }, (_, i) => authRequest({ 'x-forwarded-for': `203.0.113.${10 + i}` })),
  );
  const perGateway = await authServedPerGateway(backAt);

  report.limits = {
    seconds: seconds(Date.now() - started),
    authLimit: AUTH_LIMIT,
    redisAway: { auth: away.status, authRetryAfter: away.retryAfter, read: readWhileAway },
    countingAgainAfterSeconds: seconds(countingAgainMs),
    sent: answers.length,
    admitted: admittedStatuses.length,
    admittedStatuses: [...new Set(admittedStatuses)],
    refused429: refused.length,
    spoofedXForwardedFor: spoofed.map((a) => a.status),
    authRequestsPerGateway: perGateway,
  };
  say(`limits: ${JSON.stringify(report.limits)}`);
  check(
    admittedStatuses.length === AUTH_LIMIT && admittedStatuses.every((st) => st === 400),
    `exactly ${AUTH_LIMIT} auth requests may pass in all, across the gateways (passed ${admittedStatuses.length}: ${admittedStatuses.join(', ')})`,
  );
  check(
    refused.every((a) => a.retryAfter !== '' && isErrorBody(a.body)),
    'a refused auth request must get a JSON 429 with Retry-After',
  );
  check(
    spoofed.every((a) => a.status === 429),
    `a client's own X-Forwarded-For must not buy a fresh bucket (got ${spoofed.map((a) => a.status).join(', ')})`,
  );
  const counts = Object.values(perGateway);
  check(
    counts.length === GATEWAYS && counts.every((n) => n > 0),
    `every gateway must have served auth requests (${JSON.stringify(perGateway)})`,
  );
}

// 8b. No gateway left (both stopped): the balancer's own 503, as JSON.
async function noGatewayLeft(): Promise<void> {
  const stoppedAt = Date.now();
  await compose.exec(['stop', 'gateway']);
  let answer: { status: number; contentType: string; retryAfter: string; body: string } | undefined;
  let answeredAt = Date.now();
  try {
    while (Date.now() - stoppedAt < 30_000) {
      const res = await fetch(`${GATEWAY}/api/posts`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined);
      if (res) {
        answer = {
          status: res.status,
          contentType: res.headers.get('content-type') ?? '',
          retryAfter: res.headers.get('retry-after') ?? '',
          body: await res.text(),
        };
        answeredAt = Date.now();
        if (res.status === 503) break;
      }
      await sleep(200);
    }
  } finally {
    await compose.exec(['start', 'gateway']);
  }
  const after = await gatewayReady();
  report.noGatewayLeft = {
    answeredAfterSeconds: seconds(answeredAt - stoppedAt),
    ...answer,
    readyAgainAfterStartSeconds: seconds(after),
  };
  say(`no gateway left: ${JSON.stringify(report.noGatewayLeft)}`);
  check(
    answer?.status === 503 &&
      /^application\/json/.test(answer.contentType) &&
      answer.retryAfter !== '' &&
      isErrorBody(answer.body),
    'with no gateway able to answer, the balancer must answer a JSON 503 {error} with Retry-After',
  );
}

/** Whether `needle` occurs anywhere in what `command args` writes to stdout (streamed). */
async function streamContains(command: string, args: readonly string[], needles: readonly string[]): Promise<string[]> {
  const wanted = needles.map((n) => Buffer.from(n));
  const longest = Math.max(...wanted.map((w) => w.length));
  const found = new Set<string>();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let tail = Buffer.alloc(0);
    child.stdout.on('data', (chunk: Buffer) => {
      const window = Buffer.concat([tail, chunk]);
      wanted.forEach((w, i) => {
        if (window.includes(w)) found.add(needles[i] as string);
      });
      tail = window.subarray(Math.max(0, window.length - longest + 1));
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args[0]} exited ${code}`))));
  });
  return [...found];
}

// 7 (second half): where the secrets are, and are not.
async function secretsStayPut(): Promise<void> {
  const values = secrets();
  const names = Object.keys(values);
  const inEnv: Record<string, string[]> = {};
  const elsewhere: string[] = [];
  for (const c of await compose.containers()) {
    const raw = structuredClone(c.raw) as { Config: { Env: unknown } };
    raw.Config.Env = [];
    const rest = JSON.stringify(raw);
    for (const name of names) {
      const value = values[name] as string;
      if (c.env.some((e) => e.includes(value))) inEnv[c.service] = [...(inEnv[c.service] ?? []), name];
      if (rest.includes(value)) elsewhere.push(`${name} in ${c.service}'s inspect output outside its environment`);
    }
  }
  const images = [...new Set([...BUILT.map((s) => `${project}-${s}`)])];
  const inHistory: string[] = [];
  for (const image of images) {
    const history = await compose.docker$(['history', '--no-trunc', '--format', '{{.CreatedBy}}', image]);
    const inspect = await compose.docker$(['image', 'inspect', image]);
    for (const name of names) {
      const value = values[name] as string;
      if (history.includes(value) || inspect.includes(value)) inHistory.push(`${name} in ${image}'s history or config`);
    }
  }
  const inLayers = await streamContains(compose.docker, ['save', ...images], Object.values(values));
  report.secrets = {
    givenToContainers: inEnv,
    outsideEnvironment: elsewhere,
    inImageHistoryOrConfig: inHistory,
    inImageLayers: inLayers.map((v) => names.find((n) => values[n] === v)),
    imagesChecked: images,
  };
  say(`secrets: ${JSON.stringify(report.secrets)}`);
  check(elsewhere.length === 0, 'no secret may appear in docker inspect outside the environment Compose gave');
  check(inHistory.length === 0 && inLayers.length === 0, 'no secret may appear in any image');
}

function markdown(): string {
  const lines = [
    '# The Compose deployment, built and run (scripts/compose-e2e.sh)',
    '',
    `Run ${new Date().toISOString()} on a 2-core machine; MongoDB's place taken by ${DATABASE}.`,
    `Wall time until the report: ${seconds(Date.now() - STARTED_AT)} s. Result: ${failures.length === 0 ? '**every check passed**' : `**${failures.length} checks failed**`}.`,
    '',
  ];
  if (failures.length) lines.push(...failures.map((f) => `- FAILED: ${f}`), '');
  if (report.images) {
    lines.push('## 1. Images', '', '| service | build (s) | size (MB) | `id -u` |', '| --- | --- | --- | --- |');
    for (const i of report.images) {
      lines.push(
        `| ${i.service} | ${i.buildSeconds} | ${i.sizeMB} | ${report.uids?.[i.service] ?? 'exits after set-up'} |`,
      );
    }
    lines.push(
      '',
      `Third-party images: the database runs as uid ${report.uids?.mongo}, storage as uid ${report.uids?.storage}.`,
      '',
    );
  }
  const sections: [string, string][] = [
    ['Refused without JWT_SECRET', 'withoutJwtSecret'],
    ['2. Up and healthy (s)', 'upSeconds'],
    ['2. Published ports', 'published'],
    ['2. What the host reaches', 'hostReaches'],
    ['2. The balancer’s answer to a malformed request', 'balancerMalformed'],
    ['3. The user journey', 'journey'],
    ['3. Deleting an account', 'accountDeletion'],
    ['3. Operations (profile ops): Prometheus and Jaeger', 'operations'],
    ['4. Deploys under traffic', 'deploys'],
    ['4-5. Traffic during the deploys and the scale-out', 'traffic'],
    ['5. Scale-out', 'scale'],
    ['6. A killed process', 'kill'],
    ['6. down and up again', 'persistence'],
    ['7. Secrets', 'secrets'],
    ['8. Shared limits, through the balancer', 'limits'],
    ['8. No gateway left: the balancer answers', 'noGatewayLeft'],
  ];
  for (const [title, key] of sections) {
    if (report[key] === undefined) continue;
    lines.push(`## ${title}`, '', '```json', JSON.stringify(report[key], null, 2), '```', '');
  }
  return `${lines.join('\n')}\n`;
}

function writeReport(): void {
  report.failures = failures;
  report.wallSeconds = seconds(Date.now() - STARTED_AT);
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, 'compose.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(OUT, 'compose.md'), markdown());
  say(
    `wrote ${join(OUT, 'compose.md')}; ${failures.length === 0 ? 'every check passed' : `${failures.length} failed`}`,
  );
}

/** Stops the log followers (`docker events`, `docker logs -f`) that main starts. */
let stopFollowing = () => {};

// Stopped from outside (the script's SIGTERM): what was found so far is still written.
process.once('SIGTERM', () => {
  stopFollowing();
  failures.push('interrupted (SIGTERM) before every check ran');
  writeReport();
  process.exit(1);
});

async function main(): Promise<void> {
  let traffic: Traffic | undefined;
  stopFollowing = compose.followLogs(LOGS);
  try {
    await buildImages();
    await refusesWithoutSecret();
    await up();
    const kept = await journey();
    await accountDeletion();
    await operations();

    traffic = new Traffic({
      baseUrl: GATEWAY,
      workers: 6,
      tag: `e2e-${randomBytes(3).toString('hex')}`,
      // Attachments too: notes calls files for each, so a files deploy is felt there as well.
      mix: { attachNote: 4 },
    });
    await traffic.prepare();
    traffic.start();
    await sleep(3000);
    await deploys(traffic);
    await scale(traffic);
    await traffic.stop();
    report.traffic = Traffic.summarize(traffic.outcomes);
    say(`traffic: ${JSON.stringify(report.traffic)}`);

    await killAndRestart();
    await persistence(kept, traffic);
    await sharedLimits();
    await noGatewayLeft();
    await secretsStayPut();
  } catch (err) {
    failures.push(`stopped: ${(err as Error).message}`);
    say(`FAILED: ${(err as Error).stack ?? err}`);
    await traffic?.stop();
  } finally {
    stopFollowing();
    writeReport();
  }
  process.exit(failures.length === 0 ? 0 : 1);
}

void main();
