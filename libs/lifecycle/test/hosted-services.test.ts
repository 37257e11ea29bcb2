/**
 * HostedServices: a call to a service hosted in this process goes through HTTP over a connection
 * made in memory, and answers as fetch would over the network: status, headers, body, a signal
 * that aborts; the gateway is given the service's own handler.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
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

  it('when the address is not hosted here, then the call goes over the network, and no handler is given for it', async () => {
    const hosted = hosting();
    hosted.host('delta', echo().app, { keepAliveTimeoutMs: 30_000 });
    const server = createServer(echo().app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;

      const res = await hosted.fetch(`http://127.0.0.1:${port}/created`);

      expect(res.status).toBe(201);
      expect(hosted.handlerFor(`http://127.0.0.1:${port}`)).toBeUndefined();
      expect(hosted.handlerFor(inProcessUrl('delta'))).toBeDefined();
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
    expect(hosted.handlerFor(url)).toBeUndefined();
    await expect(hosted.fetch(`${url}/x`)).rejects.toThrow();
  });
});
