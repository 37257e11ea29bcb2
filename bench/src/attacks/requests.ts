/** Scenario 11's calls: paced-load.js in a process of its own, and a JSON request to the system. */
import type { PacedResult, PacedSpec } from '../paced-spec';
import { runScript } from '../rounds';
import type { AttackOptions } from './report-types';

export function runPaced(o: AttackOptions, spec: PacedSpec): Promise<Record<string, PacedResult>> {
  return runScript(o.node, o.dist, 'paced-load.js', [JSON.stringify(spec)]);
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}, method = 'POST') {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}
