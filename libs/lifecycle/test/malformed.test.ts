/**
 * Requests that Node's parser would answer on its own, without our error shape: every one gets a
 * JSON `{error}` with a clear 4xx, from a real server over a raw socket.
 */
import { connect } from 'node:net';
import { createLogger } from '@cs/log';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type RunningServer, runServer } from '../src/index';

let running: RunningServer;
let handled = 0;

beforeAll(async () => {
  const app = {
    callback: () => (_req: unknown, res: import('node:http').ServerResponse) => {
      handled += 1;
      res.end('{}');
    },
  };
  running = await runServer({
    app,
    port: 0,
    host: '127.0.0.1',
    logger: createLogger({ name: 'malformed-test', level: 'silent' }),
    handleSignals: false,
  });
});
afterAll(async () => {
  await running.close();
});

/** Writes `raw` and reads the whole answer until the server closes or the answer is complete. */
function exchange(raw: string): Promise<{ status: number; contentType: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(running.port, '127.0.0.1', () => socket.write(raw));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
      const [head, body = ''] = text.split('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(head ?? '')?.[1];
      if (length !== undefined && Buffer.byteLength(body) >= Number(length)) socket.destroy();
    });
    socket.on('close', () => {
      const [head = '', body = ''] = text.split('\r\n\r\n');
      resolve({
        status: Number(head.split(' ')[1]),
        contentType: /content-type: ([^\r\n]+)/i.exec(head)?.[1],
        body,
      });
    });
    socket.on('error', reject);
  });
}

describe('requests the HTTP parser refuses', () => {
  it('when an HTTP/1.1 request has no Host, then 400 with our JSON error, and the app never sees it', async () => {
    const before = handled;
    const answer = await exchange('GET / HTTP/1.1\r\nConnection: close\r\n\r\n');

    expect(answer.status).toBe(400);
    expect(answer.contentType).toMatch(/^application\/json/);
    expect(JSON.parse(answer.body)).toEqual({ error: 'Host header required' });
    expect(handled).toBe(before);
  });

  it('when a request has an Expect we do not meet, then 417 with our JSON error', async () => {
    const answer = await exchange('GET / HTTP/1.1\r\nHost: x\r\nExpect: tea\r\nConnection: close\r\n\r\n');

    expect(answer.status).toBe(417);
    expect(answer.contentType).toMatch(/^application\/json/);
    expect(JSON.parse(answer.body)).toEqual({ error: 'Expectation Failed: only 100-continue is met' });
  });

  it('when a request line is garbage, then 400 with our JSON error', async () => {
    const answer = await exchange('NOT HTTP AT ALL\r\n\r\n');

    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toEqual({ error: 'Malformed HTTP request' });
  });

  it('when an HTTP/1.1 request has its Host, then the app answers', async () => {
    const answer = await exchange('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(answer.status).toBe(200);
  });
});
