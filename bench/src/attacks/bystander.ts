/**
 * The bystander of scenario 11: its streams at a modest fixed pace (settings.ts), and its figures
 * beside an attack against its own without one.
 */
import type { PacedResult, PacedStream } from '../paced-spec';
import { round } from '../stats';
import type { Accounts } from './accounts';
import type { BystanderFigures } from './report-types';
import { BYSTANDER, BYSTANDER_REQUESTS, type BystanderRequest } from './settings';
import { okCount, percentOf } from './statuses';

/** Its reads of the post `readId`, its note creates, the public list, and its logins from its device. */
export function bystanderStreams(readId: string, a: Accounts): PacedStream[] {
  const { bystanderAuth, bystanderEmail, deviceToken, password } = a;
  return [
    {
      name: 'read by id',
      request: { kind: 'get', path: `/api/posts/${readId}` },
      ratePerS: BYSTANDER.byIdPerS,
      concurrency: BYSTANDER.concurrency,
      addresses: [BYSTANDER.address],
    },
    {
      name: 'note create',
      request: {
        kind: 'json',
        method: 'POST',
        path: '/api/notes',
        headers: bystanderAuth,
        body: { title: 'A bystander note', body: 'Written while someone else attacks.' },
      },
      ratePerS: BYSTANDER.notePerS,
      concurrency: BYSTANDER.concurrency,
      addresses: [BYSTANDER.address],
    },
    {
      name: 'public list, page 1',
      request: { kind: 'get', path: '/api/posts?page=1&limit=20' },
      ratePerS: BYSTANDER.listPerS,
      concurrency: BYSTANDER.concurrency,
      addresses: [BYSTANDER.address],
    },
    {
      name: 'login',
      request: {
        kind: 'json',
        method: 'POST',
        path: '/api/auth/login',
        headers: deviceToken ? { 'x-device-token': deviceToken } : {},
        body: { email: bystanderEmail, password },
      },
      ratePerS: BYSTANDER.loginPerS,
      concurrency: BYSTANDER.concurrency,
      addresses: BYSTANDER.loginAddresses,
    },
  ];
}

/** Each of its requests' p50 and p99 with the attack against without, and the share that succeeded. */
export function bystanderFigures(
  without: Record<string, PacedResult>,
  during: Record<string, PacedResult>,
): { each: Record<BystanderRequest, BystanderFigures>; succeededPct: number } {
  const each = Object.fromEntries(
    BYSTANDER_REQUESTS.map((name) => {
      const before = without[name];
      const now = during[name];
      const p50Without = before?.p50 ?? 0;
      const p50With = now?.p50 ?? 0;
      return [
        name,
        {
          p50Without,
          p50With,
          ratio: round(p50With / (p50Without || Number.NaN), 2),
          p99Without: before?.p99 ?? 0,
          p99With: now?.p99 ?? 0,
          sent: now?.sent ?? 0,
          succeededPct: now?.succeeded ?? 0,
        },
      ];
    }),
  ) as Record<BystanderRequest, BystanderFigures>;
  const sent = BYSTANDER_REQUESTS.reduce((sum, name) => sum + (during[name]?.sent ?? 0), 0);
  const ok = BYSTANDER_REQUESTS.reduce((sum, name) => sum + okCount(during[name]), 0);
  return { each, succeededPct: percentOf(ok, sent) };
}
