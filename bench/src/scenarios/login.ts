/** Scenario 3, login against the bcrypt ceiling (4 at a time: the libuv pool's size). */
import type { BenchSystem } from '../bench-system';
import { interleave, load, runChild } from '../measure';
import { type Report, type Row, ratio } from '../report-json';
import { BCRYPT_COST, DURATION_S } from '../run-settings';

export async function login({ gw, email }: BenchSystem) {
  const loginBody = JSON.stringify({ email, password: 'bench-password' });
  const login = await interleave([
    {
      name: 'login',
      run: () =>
        load({
          url: `${gw}/api/auth/login`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: loginBody,
          connections: 4,
        }),
    },
    { name: 'bcrypt.compare', run: () => runChild('bcrypt-ceiling.js', ['4', String(DURATION_S), BCRYPT_COST]) },
  ]);
  return { ...login, ratio: ratio(login.login?.rps, login['bcrypt.compare']?.rps), goal: '≥ 0.9' };
}

export function loginRows(login: Report): Row[] {
  return [
    [
      '3 login',
      `login ${login.login.rps.toFixed(1)}/s; bcrypt.compare ${login['bcrypt.compare'].rps.toFixed(1)}/s`,
      String(login.ratio),
      login.goal,
    ],
  ];
}
