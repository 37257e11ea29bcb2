/**
 * The balancer of the scaled topology (HAProxy), in front of two real HTTP replicas whose
 * behaviour each test sets: what it sends again and where, what it never sends twice, how it
 * uses /readyz, and that its own answers are the API's JSON errors.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@cs/testkit';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { freePort, type RunningBalancer, startBalancer } from '../src';

type Mode = 'answer' | 'hang-up';

/** A replica: answers `{replica, method, forwardedFor}` or closes the connection unanswered. */
class Replica {
  mode: Mode = 'answer';
  ready = true;
  /** Requests other than /readyz that reached it. */
  hits: string[] = [];
  private server?: Server;

  constructor(
    readonly name: string,
    readonly port: number,
  ) {}

  async listen(): Promise<void> {
    if (this.server) return;
    this.server = createServer((req, res) => {
      if (req.url === '/readyz') {
        res.writeHead(this.ready ? 200 : 503).end();
        return;
      }
      this.hits.push(`${req.method} ${req.url}`);
      req.resume();
      if (this.mode === 'hang-up') {
        req.socket.destroy();
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ replica: this.name, method: req.method, forwardedFor: req.headers['x-forwarded-for'] }));
    });
    await new Promise<void>((resolve) => this.server?.listen(this.port, '127.0.0.1', resolve));
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve(undefined)));
    this.server = undefined;
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'balancer-'));
let balancer: RunningBalancer;
let one: Replica;
let two: Replica;

/** One request on a connection of its own (no keep-alive), as a client's first request. */
function send(method: string, path = '/thing'): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(`${balancer.url('web')}${path}`, { method, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => {
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> });
      });
    });
    req.on('error', reject);
    req.end(method === 'POST' || method === 'PUT' ? '{"a":1}' : undefined);
  });
}

/** Until the balancer's checks agree with what the replicas say of themselves. */
async function checked(up: boolean[]): Promise<void> {
  await eventually(
    `the balancer seeing the replicas as up: ${up.join()}`,
    async () => ((await balancer.stats()).web ?? []).map((r) => r.up),
    (seen) => seen.join() === up.join(),
    { timeoutMs: 10_000 },
  );
}

beforeAll(async () => {
  one = new Replica('one', await freePort());
  two = new Replica('two', await freePort());
  await Promise.all([one.listen(), two.listen()]);
  balancer = await startBalancer({
    dataDir,
    kinds: [
      { name: 'web', host: '127.0.0.1', port: await freePort(), replicaPorts: [one.port, two.port], forwardFor: true },
    ],
  });
});
afterAll(async () => {
  await balancer?.stop();
  await Promise.all([one?.close(), two?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

beforeEach(async () => {
  for (const replica of [one, two]) {
    replica.mode = 'answer';
    replica.ready = true;
    replica.hits = [];
  }
  await Promise.all([one.listen(), two.listen()]);
  await checked([true, true]);
});

describe('the balancer', () => {
  it('when both replicas are ready, then requests take turns between them, each with the client in X-Forwarded-For, and the statistics count them', async () => {
    const before = (await balancer.stats()).web?.map((r) => r.requests) ?? [];
    const answers = await Promise.all(Array.from({ length: 6 }, () => send('GET')));
    const after = (await balancer.stats()).web?.map((r) => r.requests) ?? [];
    expect(answers.map((a) => a.body.replica).sort()).toEqual(['one', 'one', 'one', 'two', 'two', 'two']);
    for (const a of answers) expect(a.body.forwardedFor).toBe('127.0.0.1');
    expect(after.map((n, i) => n - (before[i] ?? 0))).toEqual([3, 3]);
  });

  it('when a replica refuses connections (killed, or draining), then every request goes to the other, POSTs included', async () => {
    await one.close();
    const answers = await Promise.all(['GET', 'POST', 'PUT', 'POST', 'DELETE', 'POST'].map((m) => send(m)));
    expect(answers.map((a) => [a.status, a.body.replica])).toEqual(Array(6).fill([200, 'two']));
  });

  it('when a replica takes a request and closes without an answer, then a GET, PUT or DELETE is sent to the other replica, and a POST is not: JSON 502', async () => {
    one.mode = 'hang-up';
    // One after the other, so that round robin sends at least every other one to the replica that
    // hangs up (a request sent again goes to the other).
    const idempotent: Awaited<ReturnType<typeof send>>[] = [];
    for (const method of ['GET', 'PUT', 'DELETE', 'GET']) idempotent.push(await send(method));
    expect(idempotent.map((a) => [a.status, a.body.replica])).toEqual(Array(4).fill([200, 'two']));
    expect(one.hits.length).toBeGreaterThanOrEqual(2);
    one.hits = [];

    const posts: Awaited<ReturnType<typeof send>>[] = [];
    for (let i = 0; i < 6; i++) posts.push(await send('POST'));
    const hungUp = posts.filter((p) => p.status === 502);
    // Each of those reached it once, and was not sent again.
    expect(hungUp.length).toBe(3);
    expect(one.hits.filter((h) => h.startsWith('POST'))).toHaveLength(3);
    for (const p of hungUp) expect(p.body).toEqual({ error: 'Upstream service unavailable' });
    expect(two.hits.filter((h) => h.startsWith('POST')).length).toBe(posts.length - hungUp.length);
  });

  it('when one replica fails /readyz, then it gets no requests until it passes again', async () => {
    one.ready = false;
    await checked([false, true]);
    const answers = await Promise.all(Array.from({ length: 4 }, () => send('GET')));
    expect(answers.map((a) => a.body.replica)).toEqual(['two', 'two', 'two', 'two']);
    one.ready = true;
    await checked([true, true]);
    const later = await Promise.all(Array.from({ length: 4 }, () => send('GET')));
    expect(later.map((a) => a.body.replica)).toContain('one');
  });

  it('when every replica fails /readyz, then requests still reach them, and each answers for itself', async () => {
    one.ready = false;
    two.ready = false;
    await checked([false, false]);
    const answers = await Promise.all(Array.from({ length: 4 }, () => send('GET')));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
  });

  it('when no replica can be reached, then a JSON 503', async () => {
    await Promise.all([one.close(), two.close()]);
    const answer = await send('GET');
    expect(answer).toEqual({ status: 503, body: { error: 'Service temporarily unavailable' } });
  });
});
