/**
 * serviceFetch: a call to a service hosted in this process is handed to its app in memory, and
 * answers as fetch would over the network: status, headers, body, and a signal that aborts.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { hostedAt, hostInProcess, inProcessUrl, serviceFetch } from '../src/index';

const stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

/** An app that answers with what it was asked, and counts the calls it got. */
function echo() {
  const seen = { calls: 0 };
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    seen.calls += 1;
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
  return { seen, listener };
}

function host(name: string, listener: (req: IncomingMessage, res: ServerResponse) => void): string {
  const hosted = hostInProcess(name, listener);
  stops.push(hosted.stop);
  return hosted.url;
}

describe('serviceFetch', () => {
  it('when the service is hosted in this process, then the request reaches its app in memory, with its method, path, headers and body', async () => {
    const { seen, listener } = echo();
    const url = host('alpha', listener);

    const res = await serviceFetch(`${url}/created?x=1`, {
      method: 'POST',
      headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
      body: JSON.stringify({ hello: 'world' }),
    });

    expect(url).toBe('http://alpha.in-process');
    expect(res.status).toBe(201);
    expect(res.ok).toBe(true);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await res.json()).toEqual({
      method: 'POST',
      url: '/created?x=1',
      authorization: 'Bearer t',
      body: '{"hello":"world"}',
    });
    expect(seen.calls).toBe(1);
  });

  it('when the answer is a 204, then the Response has no body', async () => {
    const url = host('beta', echo().listener);

    const res = await serviceFetch(`${url}/empty`);

    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
  });

  it('when the app does not answer and the signal aborts, then the call rejects with the signal’s reason', async () => {
    const url = host('gamma', echo().listener);

    const call = serviceFetch(`${url}/never`, { signal: AbortSignal.timeout(50) });

    await expect(call).rejects.toMatchObject({ name: 'TimeoutError' });
  });

  it('when the address is not hosted here, then the call goes over the network', async () => {
    host('delta', echo().listener);
    const server = createServer(echo().listener);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;

      const res = await serviceFetch(`http://127.0.0.1:${port}/created`);

      expect(res.status).toBe(201);
      expect(hostedAt(`http://127.0.0.1:${port}`)).toBeUndefined();
    } finally {
      server.close();
    }
  });

  it('when a name is hosted twice, then the second refuses, and once stopped it is no longer reached', async () => {
    const url = host('epsilon', echo().listener);

    expect(() => hostInProcess('epsilon', echo().listener)).toThrow('epsilon is already hosted in this process');
    stops.pop()?.();
    expect(hostedAt(url)).toBeUndefined();
    await expect(serviceFetch(`${inProcessUrl('epsilon')}/x`)).rejects.toThrow();
  });
});
