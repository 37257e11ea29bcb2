/**
 * HostedServices: a call to a service hosted in this process goes through HTTP over a connection
 * made in memory, and answers as fetch would over the network: status, headers, body, a signal
 * that aborts. A reader that stops reading stops the writer, as a socket's buffers would.
 */
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { HostedServices, inProcessUrl } from '../src/index';

const opened: HostedServices[] = [];
afterEach(() => {
  for (const hosted of opened.splice(0)) hosted.close();
});

/** An app that answers with what it was asked, and counts the calls and connections it got. */
function echo() {
  const seen = { calls: 0, sockets: new Set<unknown>() };
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    seen.calls += 1;
    seen.sockets.add(req.socket);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/empty') return void res.writeHead(204).end();
      if (req.url === '/never') return;
      res.setHeader('content-type', 'application/json');
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.statusCode = req.url?.startsWith('/created') ? 201 : 200;
      res.end(
        JSON.stringify({
          method: req.method,
          url: req.url,
          authorization: req.headers.authorization,
          body: Buffer.concat(chunks).toString(),
        }),
      );
    });
  };
  return { seen, app: { callback: () => listener } };
}

function hosting(): HostedServices {
  const hosted = new HostedServices();
  opened.push(hosted);
  return hosted;
}

describe('HostedServices', () => {
  it('when the service is hosted, then a call reaches its app in memory, with its method, path, headers and body, and the next call reuses the connection', async () => {
    const hosted = hosting();
    const { seen, app } = echo();
    const url = hosted.host('alpha', app, { keepAliveTimeoutMs: 30_000 });

    const res = await hosted.fetch(`${url}/created?x=1`, {
      method: 'POST',
      headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
      body: JSON.stringify({ hello: 'world' }),
    });
    const again = await hosted.fetch(`${url}/again`);

    expect(url).toBe('http://alpha.in-process');
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await res.json()).toEqual({
      method: 'POST',
      url: '/created?x=1',
      authorization: 'Bearer t',
      body: '{"hello":"world"}',
    });
    expect(again.status).toBe(200);
    expect(seen.calls).toBe(2);
    expect(seen.sockets.size).toBe(1);
  });

  it('when the answer is a 204, then the Response has no body', async () => {
    const hosted = hosting();
    const url = hosted.host('beta', echo().app, { keepAliveTimeoutMs: 30_000 });

    const res = await hosted.fetch(`${url}/empty`);

    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
  });

  it('when the app does not answer and the signal aborts, then the call rejects with the signal’s reason', async () => {
    const hosted = hosting();
    const url = hosted.host('gamma', echo().app, { keepAliveTimeoutMs: 30_000 });

    const call = hosted.fetch(`${url}/never`, { signal: AbortSignal.timeout(50) });

    await expect(call).rejects.toMatchObject({ name: 'TimeoutError' });
  });

  it('when the address is not hosted here, then the call goes over the network, and no agent is given for it', async () => {
    const hosted = hosting();
    hosted.host('delta', echo().app, { keepAliveTimeoutMs: 30_000 });
    const server = createServer(echo().app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;

      const res = await hosted.fetch(`http://127.0.0.1:${port}/created`);

      expect(res.status).toBe(201);
      expect(hosted.agentFor(`http://127.0.0.1:${port}`)).toBeUndefined();
      expect(hosted.agentFor(inProcessUrl('delta'))).toBeDefined();
    } finally {
      server.close();
    }
  });

  it('when a name is hosted twice, then the second refuses; once closed, the service is no longer reached', async () => {
    const hosted = hosting();
    const url = hosted.host('epsilon', echo().app, { keepAliveTimeoutMs: 30_000 });

    expect(() => hosted.host('epsilon', echo().app, { keepAliveTimeoutMs: 30_000 })).toThrow(
      'epsilon is already hosted in this process',
    );
    hosted.close();
    expect(hosted.agentFor(url)).toBeUndefined();
    await expect(hosted.fetch(`${url}/x`)).rejects.toThrow();
  });

  it('when the client stops reading a stream, then the app’s writes stop too, with a bounded amount in between; and a client that goes away closes the app’s answer', async () => {
    const hosted = hosting();
    let written = 0;
    let closed: () => void = () => {};
    const answerClosed = new Promise<void>((resolve) => {
      closed = resolve;
    });
    const chunk = Buffer.alloc(16 * 1024, 'x');
    const app = {
      callback: () => (_req: IncomingMessage, res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.on('close', closed);
        // Writes as long as the connection takes it, as a stream of events would under a flood.
        const pump = () => {
          while (!res.destroyed && written < 64 * 1024 * 1024) {
            written += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
        };
        pump();
      },
    };
    const url = hosted.host('zeta', app, { keepAliveTimeoutMs: 30_000 });
    const agent = hosted.agentFor(url);

    const req = request(`${url}/stream`, { agent });
    const res = await new Promise<IncomingMessage>((resolve) => req.on('response', resolve).end());
    res.pause();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const stalledAt = written;
    await new Promise((resolve) => setTimeout(resolve, 200));

    expect(stalledAt).toBeLessThan(2 * 1024 * 1024);
    expect(written).toBe(stalledAt);
    req.destroy();
    await answerClosed;
  });
});
