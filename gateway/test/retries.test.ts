import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
/**
 * What the gateway does when an upstream is restarting or has just closed a connection: requests
 * that never reached it are sent again, the ones that may have are not.
 */
import { freePort } from '@cs/devstack';
import { CONNECT_TIMED_OUT } from '@cs/errors';
import { newUserId, tokenFor } from '@cs/testkit';
import { afterEach, describe, expect, it } from '@jest/globals';
import { CONNECT_TIMEOUT_MS } from '../src/upstream/connection-pool';
import { echoUpstream, type GatewayProcess, spawnGateway, unansweredPort } from './helpers';

const auth = { authorization: `Bearer ${tokenFor(newUserId())}`, 'content-type': 'application/json' };
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((close) => close()));
});

async function gatewayTo(postsUrl: string, env: Record<string, string> = {}): Promise<GatewayProcess> {
  const gateway = await spawnGateway({ POSTS_URL: postsUrl, UPSTREAM_RETRY_WINDOW: '2s', ...env });
  cleanup.push(() => gateway.stop());
  return gateway;
}

describe('retries at the gateway', () => {
  it('when the upstream refuses connections and comes back within the window, then a POST reaches it once, body intact', async () => {
    const port = await freePort();
    const gateway = await gatewayTo(`http://127.0.0.1:${port}`);
    const body = JSON.stringify({ title: 'sent while the service restarts', body: 'x'.repeat(5000) });

    const answer = fetch(`${gateway.url}/api/posts`, { method: 'POST', headers: auth, body });
    await sleep(400);
    const upstream = await echoUpstream({ port });
    cleanup.push(() => upstream.close());
    const res = await answer;

    expect(res.status).toBe(200);
    expect(upstream.seen).toHaveLength(1);
    expect(upstream.seen[0]?.body).toBe(body);
    expect(upstream.seen[0]?.headers['content-length']).toBe(String(Buffer.byteLength(body)));
  });

  it('when a chunked body is retried, then it arrives whole with a Content-Length', async () => {
    const port = await freePort();
    const gateway = await gatewayTo(`http://127.0.0.1:${port}`);
    const parts = ['{"title":"in ', 'two parts"}'];
    const stream = new ReadableStream({
      start(controller) {
        for (const part of parts) controller.enqueue(new TextEncoder().encode(part));
        controller.close();
      },
    });

    const answer = fetch(`${gateway.url}/api/posts`, {
      method: 'POST',
      headers: auth,
      body: stream,
      duplex: 'half',
    } as RequestInit);
    await sleep(200);
    const upstream = await echoUpstream({ port });
    cleanup.push(() => upstream.close());

    expect((await answer).status).toBe(200);
    expect(upstream.seen[0]?.body).toBe(parts.join(''));
    expect(upstream.seen[0]?.headers['transfer-encoding']).toBeUndefined();
    expect(upstream.seen[0]?.headers['content-length']).toBe(String(parts.join('').length));
  });

  it('when the upstream stays down, then 502 JSON after the window, and at once while it stays down', async () => {
    const gateway = await gatewayTo(`http://127.0.0.1:${await freePort()}`);

    let started = Date.now();
    const first = await fetch(`${gateway.url}/api/posts`);
    const firstMs = Date.now() - started;
    expect(first.status).toBe(502);
    expect(await first.json()).toEqual({ error: 'Upstream service unavailable' });
    expect(firstMs).toBeGreaterThanOrEqual(1500);

    await sleep(600);
    started = Date.now();
    const next = await fetch(`${gateway.url}/api/posts`);
    expect(next.status).toBe(502);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('when no connection to the upstream ever opens (its handshakes unanswered), then each is given up within its bound and tried again, and a POST and a GET get 502 JSON once the window is over, never a hang', async () => {
    const unanswered = await unansweredPort();
    cleanup.push(async () => unanswered.close());
    const gateway = await gatewayTo(`http://127.0.0.1:${unanswered.port}`, { UPSTREAM_RETRY_WINDOW: '3s' });

    for (const method of ['POST', 'GET']) {
      const started = Date.now();
      const res = await fetch(`${gateway.url}/api/posts`, {
        method,
        headers: auth,
        body: method === 'POST' ? JSON.stringify({ title: 'sent where nothing answers' }) : undefined,
        signal: AbortSignal.timeout(20_000),
      });
      expect([method, res.status, await res.json()]).toEqual([method, 502, { error: 'Upstream service unavailable' }]);
      // Within the window and the attempt under way when it ended.
      const ms = Date.now() - started;
      expect([method, ms < 3000 + CONNECT_TIMEOUT_MS + 1500]).toEqual([method, true]);
    }
    // The first request was tried again after its first connection was given up.
    const failures = readFileSync(gateway.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('upstream failed'))
      .map((l) => JSON.parse(l) as { code?: string; attempts?: number });
    expect(failures[0]?.code).toBe(CONNECT_TIMED_OUT);
    expect(failures[0]?.attempts).toBeGreaterThanOrEqual(2);
  });

  it('when a kept-alive connection is reset before any answer, then a GET is sent again, a POST is not', async () => {
    const upstream = await echoUpstream({ resetReused: true });
    cleanup.push(() => upstream.close());
    const gateway = await gatewayTo(upstream.url);

    expect((await fetch(`${gateway.url}/api/posts/first`)).status).toBe(200);
    const get = await fetch(`${gateway.url}/api/posts/second`);
    expect(get.status).toBe(200);
    expect(upstream.seen.map((s) => s.url)).toEqual(['/api/posts/first', '/api/posts/second']);

    // The retried GET opened a fresh connection, which is now the kept-alive one: a POST on it
    // is reset, and the gateway cannot know whether the upstream acted on it.
    const post = await fetch(`${gateway.url}/api/posts`, { method: 'POST', headers: auth, body: '{"title":"t"}' });
    expect(post.status).toBe(502);
    expect(upstream.seen).toHaveLength(2);
  });

  it('when a new connection is reset before any answer (a replica closing its listener), then a GET is sent again, a POST is not', async () => {
    const forGet = await echoUpstream({ resetFirst: true });
    cleanup.push(() => forGet.close());
    const get = await fetch(`${(await gatewayTo(forGet.url)).url}/api/posts/one`);
    expect(get.status).toBe(200);
    expect(forGet.seen.map((s) => s.url)).toEqual(['/api/posts/one']);
    expect(forGet.connections()).toBe(2);

    const forPost = await echoUpstream({ resetFirst: true });
    cleanup.push(() => forPost.close());
    const post = await fetch(`${(await gatewayTo(forPost.url)).url}/api/posts`, {
      method: 'POST',
      headers: auth,
      body: '{"title":"t"}',
    });
    expect(post.status).toBe(502);
    expect(await post.json()).toEqual({ error: 'Upstream service unavailable' });
    expect(forPost.seen).toEqual([]);
  });

  it('when requests keep coming, then the gateway opens a new upstream connection every 100 requests, so a new replica gets a share', async () => {
    const upstream = await echoUpstream();
    cleanup.push(() => upstream.close());
    const gateway = await gatewayTo(upstream.url);

    for (let i = 0; i < 250; i++) {
      const res = await fetch(`${gateway.url}/api/posts/${i}`);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    expect(upstream.seen).toHaveLength(250);
    expect(upstream.connections()).toBe(3);
  });
});
