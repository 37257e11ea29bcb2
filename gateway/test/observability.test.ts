/**
 * What an operator sees, read back from real backends: Debian's Prometheus scraping every process
 * of a running system, and Jaeger (v2, built from the Go module proxy) receiving its spans over
 * OTLP. Counts equal the traffic sent; the notes outbox shows a backlog while files is stopped and
 * none once it is back; a thousand distinct ids name no series; one note created with an attachment
 * is one trace across the gateway, notes and files, their database and storage calls included.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type ProcessName,
  REPO_ROOT,
  type RunningJaeger,
  type RunningServer,
  type RunningSystem,
  startJaeger,
  startPrometheus,
} from '@cs/devstack';
import { eventually, startTestSystem } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

let system: RunningSystem;
let prometheus: RunningServer;
let jaeger: RunningJaeger;
const PROCESSES: ProcessName[] = ['gateway', 'identity', 'posts', 'notes', 'files'];

beforeAll(async () => {
  const dataDir = `${process.env.TEST_DATA_DIR ?? '.data/test'}/observability-${randomBytes(3).toString('hex')}`;
  jaeger = await startJaeger({ dataDir });
  system = await startTestSystem({
    // One process each, as Compose scrapes and traces them (and files is stopped below).
    oneProcess: false,
    metrics: true,
    env: {
      // The access log's lines, to find the trace id in them.
      LOG_LEVEL: 'info',
      AUTH_RATE_LIMIT: '0',
      RATE_LIMIT: '0',
      OUTBOX_INTERVAL: '500ms',
      OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpUrl,
      // Spans leave within a fifth of a second, instead of five.
      OTEL_BSP_SCHEDULE_DELAY: '200',
    },
  });
  prometheus = await startPrometheus({
    dataDir,
    targets: Object.fromEntries(PROCESSES.map((name) => [name, [system.processes[name].metricsUrl ?? '']])),
    ruleFiles: [join(REPO_ROOT, 'ops', 'alerts.yml')],
  });
}, 120_000);
afterAll(async () => {
  await Promise.all([system?.stop(), prometheus?.stop(), jaeger?.stop()]);
});

async function call(method: string, path: string, { token, body, headers = {} }: CallOptions = {}) {
  const res = await fetch(`${system.gatewayUrl}${path}`, {
    method,
    headers: {
      ...headers,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}
interface CallOptions {
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

async function register(): Promise<string> {
  const email = `ops-${randomBytes(5).toString('hex')}@example.com`;
  const res = await call('POST', '/api/auth/register', { body: { email, password: 'a fine password' } });
  expect(res.status).toBe(201);
  return res.body.token as string;
}

/** An object put straight to storage through a link, as a client does: its key. */
async function upload(token: string): Promise<string> {
  const bytes = Buffer.from('what the note holds\n');
  const link = await call('POST', '/api/upload-url', {
    token,
    body: { contentType: 'text/plain', filename: 'a.txt', size: bytes.length },
  });
  expect(link.status).toBe(200);
  const put = await fetch(link.body.url as string, {
    method: 'PUT',
    headers: link.body.headers as Record<string, string>,
    body: bytes,
  });
  expect(put.status).toBe(200);
  return link.body.key as string;
}

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

/** An instant query through Prometheus's HTTP API. */
async function query(promql: string): Promise<Sample[]> {
  const res = await fetch(`${prometheus.url}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = (await res.json()) as { status: string; data: { result: Sample[] } };
  expect(body.status).toBe('success');
  return body.data.result;
}

/** Longer than the 20 ms a catch-up of the public listing answers reads for. */
const READS_APART_MS = 50;

/** Scrapes and span exports reach Prometheus and Jaeger seconds after the traffic, not at once. */
const BACKENDS = { timeoutMs: 20_000, everyMs: 250 };

/** Request counts by process, method, route and status class, as Prometheus holds them. */
async function requestCounts(routes: RegExp): Promise<Record<string, number>> {
  const samples = await query('sum by (job, method, route, status_class) (http_server_request_duration_seconds_count)');
  const counts: Record<string, number> = {};
  for (const { metric, value } of samples) {
    if (!routes.test(metric.route ?? '')) continue;
    counts[`${metric.job} ${metric.method} ${metric.route} ${metric.status_class}`] = Number(value[1]);
  }
  return counts;
}

describe('metrics, scraped by Prometheus', () => {
  it('when known traffic is sent, then the request counts per process and route equal it', async () => {
    const token = await register();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const made = await call('POST', '/api/posts', {
        token,
        body: { title: `counted ${i}`, body: 'a body of ten or more', tags: ['counted'] },
      });
      expect(made.status).toBe(201);
      ids.push(made.body._id as string);
    }
    // Each read comes longer after the one before than a catch-up of the listing answers reads for
    // (FRESH_MS in services/posts/src/listing.ts), so each catches up: the count below is exact.
    for (const id of ids.slice(0, 3)) {
      await sleep(READS_APART_MS);
      expect((await call('GET', `/api/posts/${id}`, { token })).status).toBe(200);
    }
    for (let i = 0; i < 4; i++) {
      await sleep(READS_APART_MS);
      expect((await call('GET', '/api/posts?tag=counted')).status).toBe(200);
    }
    for (let i = 0; i < 2; i++) expect((await call('GET', '/api/posts/not-an-id')).status).toBe(400);
    for (let i = 0; i < 6; i++) expect((await call('GET', `/api/nowhere/${i}`)).status).toBe(404);

    const expected = {
      'gateway POST /api/posts 2xx': 5,
      'gateway GET /api/posts/{id} 2xx': 3,
      'gateway GET /api/posts 2xx': 4,
      'gateway GET /api/posts/{id} 4xx': 2,
      'gateway GET other 4xx': 6,
      'posts POST /api/posts 2xx': 5,
      'posts GET /api/posts/:id 2xx': 3,
      'posts GET /api/posts 2xx': 4,
      'posts GET /api/posts/:id 4xx': 2,
    };
    const counts = await eventually(
      'the request counts scraped',
      () => requestCounts(/^(?:\/api\/posts|other)/),
      (found) => Object.entries(expected).every(([series, n]) => (found[series] ?? 0) >= n),
      BACKENDS,
    );
    expect(counts).toEqual(expected);
    // The database's share, by operation: each request's operations on the posts collection (the
    // first list reads the listing whole, once, after finding the change log's newest entry: the
    // head and one lookup; the three lists after it, with no published post changed, each look up
    // the next entry of the log and find none, and so does each of the three reads by id that
    // found its post, before it is answered from the listing; the change events of the five posts
    // created tell them as written, with no read; created one after another, each is an insert
    // of its own), and on identity's users (a registration looks the address up first, and one
    // already taken stops there).
    const email = `ops-${randomBytes(5).toString('hex')}@example.com`;
    expect((await call('POST', '/api/auth/register', { body: { email, password: 'a fine password' } })).status).toBe(
      201,
    );
    expect((await call('POST', '/api/auth/register', { body: { email, password: 'a fine password' } })).status).toBe(
      400,
    );
    const operations = async () => {
      const samples = await query(
        'sum by (job, collection, operation, outcome) (db_client_operation_duration_seconds_count{collection=~"posts|listing_changes|users"})',
      );
      return Object.fromEntries(
        samples.map(({ metric: m, value }) => [
          `${m.job} ${m.collection} ${m.operation} ${m.outcome}`,
          Number(value[1]),
        ]),
      );
    };
    const database = {
      'posts posts insertMany ok': 5,
      'posts posts findOne ok': 3,
      'posts posts find ok': 1,
      'posts listing_changes findOne ok': 5 + 3,
      'identity users findOne ok': 3,
      'identity users save ok': 2,
    };
    const scraped = await eventually(
      'the database operations of both registrations scraped',
      operations,
      (found) => found['identity users findOne ok'] === 3 && found['posts posts findOne ok'] === 3,
      BACKENDS,
    );
    expect(scraped).toEqual(database);
    // A path no route matched never became a label, at the gateway or anywhere.
    const labels = await query('count by (route) (http_server_request_duration_seconds_count)');
    expect(labels.map((s) => s.metric.route).filter((r) => r?.includes('nowhere'))).toEqual([]);
  });

  it('when files is stopped, then the notes outbox shows its backlog, and none once files is back', async () => {
    const token = await register();
    const key = await upload(token);
    const note = await call('POST', '/api/notes', { token, body: { title: 'to release', attachmentKey: key } });
    expect(note.status).toBe(201);
    const depth = async () => Number((await query('outbox_entries{outbox="note_releases"}'))[0]?.value[1] ?? NaN);
    const age = async () =>
      Number((await query('outbox_oldest_entry_age_seconds{outbox="note_releases"}'))[0]?.value[1] ?? NaN);
    await eventually('no outbox backlog', depth, (d) => d === 0, BACKENDS);

    await system.processes.files.child.stop();
    try {
      expect((await call('DELETE', `/api/notes/${note.body._id}`, { token })).status).toBe(204);
      expect(await eventually('a backlog in the outbox', depth, (d) => d >= 1, BACKENDS)).toBe(1);
      await eventually('the oldest entry a second old', age, (a) => a >= 1, BACKENDS);
    } finally {
      await system.start('files');
    }
    await eventually('no outbox backlog once files is back', depth, (d) => d === 0, BACKENDS);
    await eventually('no oldest entry age once files is back', age, (a) => a === 0, BACKENDS);
  });
});

describe('the alert rules', () => {
  it('when Prometheus loads ops/alerts.yml, then all five rules evaluate without error, and none fires on a healthy system', async () => {
    const rules = await eventually(
      'every alert rule evaluated',
      async () => {
        const res = await fetch(`${prometheus.url}/api/v1/rules`);
        const body = (await res.json()) as {
          data: { groups: { rules: { name: string; health: string; state: string; lastError?: string }[] }[] };
        };
        return body.data.groups.flatMap((g) => g.rules);
      },
      (found) => found.length > 0 && found.every((r) => r.health !== 'unknown'),
      BACKENDS,
    );
    expect(rules.map((r) => [r.name, r.health, r.lastError ?? ''])).toEqual(
      ['ErrorRateHigh', 'LatencyHigh', 'ProcessDown', 'OutboxStuck', 'DependencyFailing'].map((n) => [n, 'ok', '']),
    );
    expect(rules.filter((r) => r.state === 'firing').map((r) => r.name)).toEqual([]);
  });
});

describe('where metrics are served', () => {
  it('when /metrics is asked of the public port or a service port, then it is not there; only the metrics port has it', async () => {
    expect((await fetch(`${system.gatewayUrl}/metrics`)).status).toBe(404);
    for (const name of PROCESSES) {
      const { url, metricsUrl = '' } = system.processes[name];
      expect([name, (await fetch(`${url}/metrics`)).status]).toEqual([name, 404]);
      const served = await fetch(metricsUrl);
      expect([name, served.status]).toEqual([name, 200]);
      expect(await served.text()).toContain(`service="${name}"`);
      expect(new URL(metricsUrl).port).not.toBe(String(system.processes[name].port));
    }
  });
});

describe('labels', () => {
  /** Every series of every process's own metrics (not Node's), as its endpoint serves them. */
  /** Every series the processes serve now: a metric's name with its labels, without its value. */
  async function seriesNow(): Promise<Set<string>> {
    const series = new Set<string>();
    for (const name of PROCESSES) {
      const text = await (await fetch(system.processes[name].metricsUrl ?? '')).text();
      for (const line of text.split('\n')) {
        if (/^(?:http_|db_|storage_|gateway_|outbox_|files_)/.test(line))
          series.add(`${name} ${line.replace(/ \S+$/, '')}`);
      }
    }
    return series;
  }

  it('when a thousand distinct ids are requested, then no series names one of them', async () => {
    const token = await register();
    const requested: string[] = [];
    const id = () => {
      const made = randomBytes(12).toString('hex');
      requested.push(made);
      return made;
    };
    const round = (n: number) =>
      Promise.all(
        Array.from({ length: n }, async (_, i) => {
          const kind = i % 4;
          const path =
            kind === 0
              ? `/api/posts/${id()}`
              : kind === 1
                ? `/api/notes/${id()}`
                : kind === 2
                  ? `/api/posts/${id()}x`
                  : `/api/${id()}/${id()}`;
          const res = await call('GET', path, kind === 1 ? { token } : {});
          expect(res.status).toBe(kind === 2 ? 400 : 404);
        }),
      );
    // One of each first: a route and status class seen for the first time is a new series.
    await round(8);
    const before = await seriesNow();
    for (let i = 0; i < 10; i++) await round(100);
    // Background work (a sweeper pass, an outbox poll) may add a series of its own meanwhile: what
    // must never happen is a series per id, so the new ones are searched for the ids requested.
    const added = [...(await seriesNow())].filter((series) => !before.has(series));
    expect(added.filter((series) => requested.some((made) => series.includes(made)))).toEqual([]);
    expect(added.length).toBeLessThan(20);
    expect(before.size).toBeGreaterThan(0);
  });
});

interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  processID: string;
  references: { refType: string; spanID: string }[];
  tags: { key: string; value: unknown }[];
}
interface JaegerTrace {
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string }>;
}

describe('traces, stored by Jaeger', () => {
  /** The services a trace's spans came from, as Jaeger has them (none when it has no such trace). */
  const spansOf = async (traceId: string) => {
    const res = await fetch(`${jaeger.queryUrl}/api/traces/${traceId}`);
    if (res.status !== 200) return [];
    const [found] = ((await res.json()) as { data: JaegerTrace[] }).data;
    return found ? found.spans.map((span) => found.processes[span.processID]?.serviceName) : [];
  };
  const traceparent = (traceId: string) => `00-${traceId}-${randomBytes(8).toString('hex')}-01`;

  it('when a note is created with an attachment, then one trace holds the gateway, notes, files, and their database and storage calls, each under its caller', async () => {
    const token = await register();
    const key = await upload(token);
    // The client starts the trace: W3C trace context on the request, as a browser SDK sends it.
    const traceId = randomBytes(16).toString('hex');
    const clientSpan = randomBytes(8).toString('hex');
    const note = await call('POST', '/api/notes', {
      token,
      body: { title: 'traced', attachmentKey: key },
      headers: { traceparent: `00-${traceId}-${clientSpan}-01` },
    });
    expect(note.status).toBe(201);

    const read = async (): Promise<JaegerTrace | undefined> => {
      const res = await fetch(`${jaeger.queryUrl}/api/traces/${traceId}`);
      if (res.status !== 200) return undefined;
      return ((await res.json()) as { data: JaegerTrace[] }).data[0];
    };
    const tag = (span: JaegerSpan, key: string) => span.tags.find((t) => t.key === key)?.value;
    const serviceOf = (t: JaegerTrace, span: JaegerSpan) => t.processes[span.processID]?.serviceName;
    const isDb = (span: JaegerSpan) =>
      tag(span, 'db.system') === 'mongodb' || tag(span, 'db.system.name') === 'mongodb';
    const isStorage = (span: JaegerSpan) => tag(span, 'rpc.service') === 'S3';
    const complete = (t: JaegerTrace | undefined) =>
      Boolean(
        t &&
          ['gateway', 'notes', 'files'].every((s) => t.spans.some((span) => serviceOf(t, span) === s)) &&
          t.spans.some((span) => serviceOf(t, span) === 'files' && isStorage(span)) &&
          t.spans.some((span) => serviceOf(t, span) === 'notes' && isDb(span)) &&
          t.spans.some((span) => serviceOf(t, span) === 'files' && isDb(span)),
      );
    const trace = await eventually('one trace across gateway, notes and files', read, complete, BACKENDS);
    if (!trace) throw new Error('Jaeger has no trace of the request');

    const byId = new Map(trace.spans.map((span) => [span.spanID, span]));
    const parentOf = (span: JaegerSpan) => span.references.find((r) => r.refType === 'CHILD_OF')?.spanID;
    /** The services a span's ancestry passes through, from it up to the root. */
    const lineage = (span: JaegerSpan): string[] => {
      const services: string[] = [];
      for (let at: JaegerSpan | undefined = span; at; at = byId.get(parentOf(at) ?? '')) {
        const service = serviceOf(trace, at) ?? '?';
        if (services.at(-1) !== service) services.push(service);
      }
      return services;
    };

    // One root, the gateway's server span, whose parent is the client's span; every other span's
    // parent is in the trace.
    const roots = trace.spans.filter((span) => !byId.has(parentOf(span) ?? ''));
    expect(roots.map((span) => [serviceOf(trace, span), parentOf(span), span.operationName])).toEqual([
      ['gateway', clientSpan, 'POST /api/notes'],
    ]);
    for (const span of trace.spans) {
      const service = serviceOf(trace, span);
      const expected =
        service === 'gateway'
          ? ['gateway']
          : service === 'notes'
            ? ['notes', 'gateway']
            : ['files', 'notes', 'gateway'];
      expect([span.operationName, lineage(span)]).toEqual([span.operationName, expected]);
    }
    // The storage call is files' (the claim checks the object), under files' server span.
    const storage = trace.spans.filter(isStorage);
    expect(storage.length).toBeGreaterThan(0);

    // Each process's access-log line for the request carries the trace id next to the request id.
    for (const name of ['gateway', 'notes', 'files'] as const) {
      const lines = readFileSync(system.processes[name].logFile, 'utf8')
        .split('\n')
        .filter((line) => line.includes(traceId))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect([name, lines.some((l) => l.traceId === traceId && typeof l.requestId === 'string')]).toEqual([name, true]);
    }
  });
  it('when a request comes with a trace its caller did not sample, then no process records a span of it', async () => {
    const token = await register();
    const keys = { '00': await upload(token), '01': await upload(token) };
    const unsampled = randomBytes(16).toString('hex');
    const sampled = randomBytes(16).toString('hex');
    const create = (traceId: string, flags: '00' | '01') =>
      call('POST', '/api/notes', {
        token,
        body: { title: `flags ${flags}`, attachmentKey: keys[flags] },
        headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-${flags}` },
      });
    expect((await create(unsampled, '00')).status).toBe(201);
    expect((await create(sampled, '01')).status).toBe(201);

    // The sampled one, sent after, reaches Jaeger from every process it passed: the unsampled
    // one's spans, had any been made, were sent in the same batches or earlier.
    const seen = await eventually(
      'spans of the sampled request from gateway, notes and files',
      () => spansOf(sampled),
      (services) => ['gateway', 'notes', 'files'].every((s) => services.includes(s)),
      BACKENDS,
    );
    expect(new Set(seen)).toEqual(new Set(['gateway', 'notes', 'files']));
    expect(await spansOf(unsampled)).toEqual([]);
  });

  it('when health probes come with a sampled trace, then no process records a span of them', async () => {
    const probes = ['/healthz', '/readyz'].flatMap((path) =>
      [system.gatewayUrl, system.processes.notes.url].map((base) => ({
        url: `${base}${path}`,
        traceId: randomBytes(16).toString('hex'),
      })),
    );
    for (const { url, traceId } of probes) {
      const res = await fetch(url, { headers: { traceparent: traceparent(traceId) } });
      expect({ url, status: res.status }).toEqual({ url, status: 200 });
    }
    // A sampled request after them reaches Jaeger: the probes' spans, had any been made, were
    // sent in the same batches or earlier.
    const sampled = randomBytes(16).toString('hex');
    expect((await call('GET', '/api/posts', { headers: { traceparent: traceparent(sampled) } })).status).toBe(200);
    await eventually(
      'spans of the sampled request from gateway and posts',
      () => spansOf(sampled),
      (services) => ['gateway', 'posts'].every((s) => services.includes(s)),
      BACKENDS,
    );
    for (const { url, traceId } of probes) expect({ url, spans: await spansOf(traceId) }).toEqual({ url, spans: [] });
  });
});
