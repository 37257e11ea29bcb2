/**
 * writesInTurn in a small real app over HTTP: handlers that stay open until the test lets them
 * finish, so the order in which writes start is what the line decides.
 */

import type { Server } from 'node:http';
import { HttpError, messages } from '@cs/errors';
import { captureLogger, eventually, newCaller, verifierWithoutRevocations } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Router from '@koa/router';
import request from 'supertest';
import { type AppState, createServiceApp, requireAuth, writeBulkhead, writesInTurn } from '../src';

/** Writes started, by the label their body names; each waits until `finish` lets it end. */
const started: string[] = [];
/** The running writes, oldest first: each ends when called, failing with `failure` if given. */
const open: Array<(failure?: Error) => void> = [];
let server: Server;
const line = writeBulkhead(1);

/** Waits for what the line has done, failing after 2 s rather than hanging. */
async function until(condition: () => boolean): Promise<void> {
  await eventually(String(condition), condition, Boolean, { everyMs: 5, timeoutMs: 2_000 });
}

/** Ends the oldest running write. */
function finishOne(): void {
  open.shift()?.();
}

beforeAll(() => {
  const router = new Router<AppState>();
  router.post('/things/:label', requireAuth(verifierWithoutRevocations()), writesInTurn(line), async (ctx) => {
    started.push(ctx.params.label as string);
    await new Promise<void>((resolve, reject) => open.push((failure) => (failure ? reject(failure) : resolve())));
    ctx.status = 204;
  });
  router.post(
    '/creates/:label',
    requireAuth(verifierWithoutRevocations()),
    writesInTurn(line, { together: true }),
    async (ctx) => {
      started.push(ctx.params.label as string);
      await new Promise<void>((resolve) => open.push(() => resolve()));
      ctx.status = 201;
    },
  );
  router.post('/unauthenticated', writesInTurn(line), (ctx) => {
    ctx.status = 204;
  });
  const app = createServiceApp({
    name: 'koa-test',
    logger: captureLogger('koa-test').logger,
    routers: [router],
    readiness: {},
    tokens: verifierWithoutRevocations(),
  });
  server = app.listen(0, '127.0.0.1');
});
afterAll(() => {
  // Writes a failing test left running end, so the server can close.
  while (open.length > 0) finishOne();
  server.close();
});

describe('writes in turn', () => {
  it('when one account has many writes waiting, then another account’s write starts after at most one of theirs', async () => {
    const importer = newCaller();
    const bystander = newCaller();
    const http = request(server);
    const imports = ['i1', 'i2', 'i3', 'i4'].map((label) => http.post(`/things/${label}`).set(importer.auth).then());
    // The other three wait in line before the bystander comes.
    await until(() => started.length === 1 && line.load().waiting === 3);
    const own = http.post('/things/b1').set(bystander.auth).then();
    await until(() => line.load().waiting === 4);

    while (started.length < 5 || open.length > 0) {
      await until(() => open.length > 0);
      finishOne();
      await new Promise((r) => setTimeout(r, 20));
    }
    const answers = await Promise.all([...imports, own]);

    expect(answers.map((res) => res.status)).toEqual([204, 204, 204, 204, 204]);
    // The importer's first write, one more of theirs as it ends, then the bystander's.
    expect(started.slice(0, 2).every((label) => label.startsWith('i'))).toBe(true);
    expect(started[2]).toBe('b1');
  });

  it('when a write fails because the database is away (503), then the writes waiting get its 503 at once, without running', async () => {
    const http = request(server);
    const [first, second] = [newCaller(), newCaller()];
    const running = http.post('/things/f1').set(first.auth).then();
    await until(() => started.includes('f1'));
    const waiting = [http.post('/things/f2').set(first.auth).then(), http.post('/things/f3').set(second.auth).then()];
    await until(() => line.load().waiting === 2);

    const away = Object.assign(new Error('connection closed'), { name: 'MongoNetworkError' });
    open.shift()?.(new HttpError(503, messages.unavailable, { cause: away }));
    const answers = await Promise.all([running, ...waiting]);

    expect(answers.map((res) => [res.status, res.body.error])).toEqual(
      Array.from({ length: 3 }, () => [503, messages.unavailable]),
    );
    expect(started.filter((label) => label.startsWith('f'))).toEqual(['f1']);
    expect(line.load()).toEqual({ running: 0, waiting: 0 });
  });

  it('when a route has no caller, then it fails closed rather than share one turn', async () => {
    const res = await request(server).post('/unauthenticated');

    expect(res.status).toBe(500);
  });

  it('when creates of several accounts wait behind a write, then they start together in the place it frees', async () => {
    const http = request(server);
    const before = started.length;
    const write = http.post('/things/w1').set(newCaller().auth).then();
    await until(() => started.length === before + 1);
    const creates = ['c1', 'c2', 'c3'].map((label) => http.post(`/creates/${label}`).set(newCaller().auth).then());
    await until(() => line.load().waiting === 3);

    finishOne();
    await until(() => started.length === before + 4);
    // All three run at once, in the one place: none had to end for the next to start.
    expect(started.slice(before + 1).sort()).toEqual(['c1', 'c2', 'c3']);
    expect(open).toHaveLength(3);
    expect(line.load()).toEqual({ running: 1, waiting: 0 });
    while (open.length > 0) finishOne();
    const answers = await Promise.all([write, ...creates]);
    expect(answers.map((res) => res.status)).toEqual([204, 201, 201, 201]);
  });
});
