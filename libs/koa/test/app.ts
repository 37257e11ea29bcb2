import { captureLogger, TEST_JWT_SECRET } from '@cs/testkit';
import Router from '@koa/router';
import request from 'supertest';
import {
  type AppState,
  bodyOf,
  createServiceApp,
  failureMessage,
  idGuard,
  optionalAuth,
  requireAuth,
  validateBody,
} from '../src';

/** A small app made only of the shared middlewares, as a service would assemble them. */
export function testApp(ready = true) {
  const logs = captureLogger('koa-test');
  const router = new Router<AppState>();
  router.param('id', idGuard());
  router.get('/protected', requireAuth({ secret: TEST_JWT_SECRET }), (ctx) => {
    ctx.body = { userId: ctx.state.userId };
  });
  router.get('/optional', optionalAuth({ secret: TEST_JWT_SECRET }), (ctx) => {
    ctx.body = { userId: ctx.state.userId ?? null };
  });
  router.get('/things/:id', (ctx) => {
    ctx.body = { id: ctx.params.id };
  });
  router.post(
    '/validated',
    validateBody(
      {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'age'],
        properties: { name: { type: 'string', minLength: 1 }, age: { type: 'integer', minimum: 0 } },
      },
      { name: 'name is required', age: { minimum: 'age cannot be negative', default: 'age must be a whole number' } },
    ),
    (ctx) => {
      ctx.body = bodyOf(ctx);
    },
  );
  router.get('/explodes', () => {
    throw new Error('secret internal detail: mongodb://user:pass@db');
  });
  router.get('/explodes-with-message', failureMessage('Failed to do the thing'), () => {
    throw new TypeError('cannot read properties of undefined');
  });
  router.get('/db-away', () => {
    throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:27017'), { name: 'MongoServerSelectionError' });
  });
  const app = createServiceApp({ logger: logs.logger, routers: [router], readiness: { database: async () => ready } });
  return { http: request(app.callback()), logs };
}
