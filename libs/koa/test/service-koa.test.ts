/**
 * ServiceKoa over real sockets: Koa's answers as Koa gives them, and a response the app writes
 * itself (a stream) no longer keeps its context alive while it lasts. Whether an object is kept
 * is what the garbage collector does with it, so the test asks V8 for a collection.
 */
import { once } from 'node:events';
import { get, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import type { AppContext } from '../src';
import { ServiceKoa } from '../src/service-koa';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

describe('ServiceKoa', () => {
  it('when a route sets a status and a body, or nothing, or throws, then Koa answers as it would', async () => {
    const app = new ServiceKoa();
    app.silent = true;
    app.use(async (ctx) => {
      if (ctx.path === '/created') {
        ctx.status = 201;
        ctx.body = { made: true };
      } else if (ctx.path === '/broken') {
        throw new Error('boom');
      }
    });
    const http = request(app.callback());

    const [created, nothing, broken] = await Promise.all([
      http.get('/created'),
      http.get('/none'),
      http.get('/broken'),
    ]);

    expect([created.status, created.body]).toEqual([201, { made: true }]);
    expect(nothing.status).toBe(404);
    expect(broken.status).toBe(500);
  });

  it('when a route writes a stream itself, then its context is not kept while the stream stays open', async () => {
    let context: WeakRef<AppContext> | undefined;
    const app = new ServiceKoa();
    app.use(async (ctx) => {
      context = new WeakRef(ctx as AppContext);
      ctx.respond = false;
      ctx.res.writeHead(200, { 'content-type': 'text/event-stream' });
      ctx.res.write(': open\n\n');
    });
    server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const response = await new Promise<IncomingMessage>((resolve) => get(`http://127.0.0.1:${port}/`, resolve));
    await once(response, 'data');

    // Collected across a few turns: what the request's last callbacks held is let go once they ran.
    for (let turn = 0; turn < 5 && context?.deref() !== undefined; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
      collectGarbage();
    }

    expect(response.statusCode).toBe(200);
    expect(response.complete).toBe(false);
    expect(context).toBeDefined();
    expect(context?.deref()).toBeUndefined();
  });
});
