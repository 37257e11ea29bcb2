/**
 * A connection in memory, as HTTP uses it: what one end writes the other reads, a reader that
 * stops reading stops the writer (as a socket's buffers would), and one end's close is seen by
 * the other.
 */
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import { describe, expect, it } from '@jest/globals';
import { MemorySocket } from '../src/memory-socket';

describe('MemorySocket', () => {
  it('when an HTTP client stops reading a stream, then the server’s writes stop too, with a bounded amount in between; and a client that goes away closes the server’s answer', async () => {
    let written = 0;
    let closed: () => void = () => {};
    const answerClosed = new Promise<void>((resolve) => {
      closed = resolve;
    });
    const chunk = Buffer.alloc(16 * 1024, 'x');
    const server = createServer((_req: IncomingMessage, res: ServerResponse) => {
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
    });
    const [client, serverSide] = MemorySocket.pair();
    server.emit('connection', serverSide);

    const req = request({ host: 'service.in-process', path: '/stream', createConnection: () => client });
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

  it('when one end writes and ends, then the other reads it all and ends; a write after the other end is gone fails as a reset', async () => {
    const [one, other] = MemorySocket.pair();
    const read: Buffer[] = [];
    other.on('data', (chunk: Buffer) => read.push(chunk));
    const ended = new Promise((resolve) => other.once('end', resolve));

    one.end('hello, other end');
    await ended;
    expect(Buffer.concat(read).toString()).toBe('hello, other end');

    const [a, b] = MemorySocket.pair();
    b.destroy();
    const failed = new Promise<NodeJS.ErrnoException>((resolve) => a.once('error', resolve));
    a.write('anyone there?');
    expect((await failed).code).toBe('ECONNRESET');
  });
});
