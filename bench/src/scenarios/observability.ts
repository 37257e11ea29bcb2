/**
 * Scenario 9, what observability costs: the gateway hop and an authenticated read (a caller's
 * notes: token verified twice, a query on a small collection) on three more systems beside the
 * first, on the same databases: metrics on (served on their own ports); tracing on, sampling a
 * tenth of the traces as production would (parentbased_traceidratio 0.1); tracing on, every span.
 * Both exporting over OTLP to one real Jaeger, on the same two cores.
 */
import { join } from 'node:path';
import { type MongoServer, type RunningServer, startJaeger, startSystem } from '@cs/devstack';
import type { BenchSystem } from '../bench-system';
import { LIMITS_OFF } from '../limits-off';
import { interleave, load } from '../measure';
import type { Report, Row } from '../report-json';
import { BCRYPT_COST, CONNECTIONS as C, OBSERVED_ROUNDS, OBSERVED_WARMUP_S, S3, SECRET } from '../run-settings';
import { pairedRatio } from '../stats';

/** Where the systems beside the first run, and what they start on. */
export interface ObservedServers {
  dataDir: string;
  mongo: MongoServer;
  storage: RunningServer;
  own(stoppable: { stop(): Promise<unknown> }): void;
}

export async function observability({ gw, postPath, auth }: BenchSystem, servers: ObservedServers) {
  const { dataDir, mongo, storage, own } = servers;
  const jaeger = await startJaeger({ dataDir });
  own(jaeger);
  const variant = (name: string, env: Record<string, string>, metrics: boolean) =>
    startSystem({
      dataDir: join(dataDir, name),
      mongoUrl: mongo?.url ?? '',
      storage: { endpoint: storage?.url ?? '', ...S3 },
      jwtSecret: SECRET,
      dbPrefix: `b${process.pid}_`,
      metrics,
      env: {
        LOG_LEVEL: 'warn',
        ...LIMITS_OFF,
        BCRYPT_COST: BCRYPT_COST,
        ...env,
      },
    });
  const tracing = { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpUrl };
  const systems: Record<string, string> = { off: gw };
  for (const [name, env, metrics] of [
    ['metrics', {}, true],
    [
      'tracing, 10% sampled',
      { ...tracing, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' },
      false,
    ],
    ['tracing, every span', tracing, false],
  ] as const) {
    const started = await variant(name.replace(/\W+/g, '-'), env, metrics);
    own(started);
    systems[name] = started.gatewayUrl;
  }
  const reads = { hop: { path: postPath, headers: {} }, authenticated: { path: '/api/notes', headers: auth } };
  // A new process runs slower until V8 has compiled its hot paths: warm each up first.
  for (const url of Object.values(systems)) {
    for (const { path, headers } of Object.values(reads))
      await load({ url: `${url}${path}`, headers, connections: C }, OBSERVED_WARMUP_S);
  }
  const measure = ({ path, headers }: { path: string; headers: Record<string, string> }) =>
    interleave(
      Object.entries(systems).map(([name, url]) => ({
        name,
        run: () => load({ url: `${url}${path}`, headers, connections: C }),
      })),
      OBSERVED_ROUNDS,
    );
  const result = { hop: await measure(reads.hop), authenticated: await measure(reads.authenticated) };
  // The spans must have reached Jaeger, or "tracing on" measured nothing.
  const traced = (await (await fetch(`${jaeger.queryUrl}/api/services`)).json()) as { data: string[] | null };
  return {
    ...result,
    tracedServices: (traced.data ?? []).sort(),
    ratios: Object.fromEntries(
      (['hop', 'authenticated'] as const).map((read) => [
        read,
        Object.fromEntries(
          Object.entries(result[read])
            .filter(([name]) => name !== 'off')
            .map(([name, r]) => [name, pairedRatio(r.rounds, result[read].off?.rounds ?? [])]),
        ),
      ]),
    ),
    ratioOf: 'median of the round-by-round ratios to off',
    goal: 'metrics ≥ 0.97 × off; tracing (10% sampled, exporting to Jaeger) ≥ 0.9 × off',
  };
}

export function observabilityRows(observability: Report): Row[] {
  return (['hop', 'authenticated'] as const).map(
    (read) =>
      [
        `9 observability, ${read === 'hop' ? 'gateway hop' : 'authenticated read (GET /api/notes)'}`,
        Object.entries(observability[read] as Report)
          .map(([name, r]: [string, Report]) => `${name} ${r.rps.toFixed(0)} rps`)
          .join('; '),
        Object.entries(observability.ratios[read] as Report)
          .map(([name, x]) => `${name} ${x}`)
          .join('; '),
        observability.goal,
      ] as Row,
  );
}
