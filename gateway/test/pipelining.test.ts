/**
 * Pipelined requests behind a stream, and too many at once, on a real server and raw sockets
 * (pipelining.ts): the connection is closed, and what was refused never runs.
 */
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { boundPipelining, MAX_IN_FLIGHT } from '../src/pipelining';

let server: Server;
let port: number;
const ran: string[] = [];

beforeEach(async () => {
  ran.length = 0;
  server = createServer(
    boundPipelining(
      (req) => req.url === '/stream',
      (req, res) => {
        ran.push(req.url ?? '');
        if (req.url === '/stream') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(': open\n\n');
          return;
        }
        res.end('ok');
      },
    ),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Sends `paths` as pipelined GETs in one write; what came back, and whether the server closed the connection, within 1 s. */
async function pipeline(paths: string[]): Promise<{ answers: number; closed: boolean }> {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  socket.on('close', () => {
    closed = true;
  });
  socket.on('error', () => undefined);
  socket.write(paths.map((path) => `GET ${path} HTTP/1.1\r\nhost: localhost\r\n\r\n`).join(''));
  const deadline = Date.now() + 1_000;
  while (!closed && Date.now() < deadline) await sleep(20);
  socket.destroy();
  return { answers: text.split('HTTP/1.1 200').length - 1, closed };
}

describe('pipelined requests', () => {
  it('when a request is pipelined behind a stream, then the connection is closed and the request never runs', async () => {
    const { closed } = await pipeline(['/stream', '/other', '/other']);

    expect(closed).toBe(true);
    expect(ran).toEqual(['/stream']);
  });

  it('when a connection sends as many requests at once as it may, then each is answered, and it stays open', async () => {
    const { answers, closed } = await pipeline(Array(MAX_IN_FLIGHT).fill('/other'));

    expect(answers).toBe(MAX_IN_FLIGHT);
    expect(closed).toBe(false);
  });

  it('when a connection sends more requests at once than it may, then it is closed, and those past the bound never run', async () => {
    const { closed } = await pipeline(Array(MAX_IN_FLIGHT * 4).fill('/other'));

    expect(closed).toBe(true);
    expect(ran.length).toBe(MAX_IN_FLIGHT);
  });
});
