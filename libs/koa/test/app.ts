import { objectIdParamSchema } from '@cs/contract';
import { captureLogger, verifierWithoutRevocations } from '@cs/testkit';
import Router from '@koa/router';
import request from 'supertest';
import {
  type AppState,
  bodyOf,
  createServiceApp,
  failureMessage,
  noBody,
  optionalAuth,
  requireAuth,
  validateBody,
  validateParam,
  validateQuery,
} from '../src';

/** The validation step's shape: `400 {errors: [{field, message}]}`, messages from the schema. */
export const stepSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'age'],
  properties: {
    name: { type: 'string', minLength: 1, 'x-messages': 'name is required' },
    age: {
      type: 'integer',
      minimum: 0,
      'x-messages': { minimum: 'age cannot be negative', default: 'age must be a whole number' },
    },
  },
} as const;

/**
 * A route that answers `{error}` (with 422, to tell it from the default): the root's messages
 * first, in their order, then the fields' own.
 */
export const answeredSchema = {
  type: 'object',
  required: ['email'],
  properties: {
    email: {
      type: 'string',
      pattern: '@',
      allOf: [{ pattern: '\\S', 'x-messages': 'email is required' }],
      'x-messages': { pattern: 'email must be an address' },
    },
    password: {
      type: 'string',
      minLength: 8,
      'x-maxBytes': 12,
      'x-messages': { minLength: 'password is too short', 'x-maxBytes': 'password is too long' },
    },
  },
  'x-error': { status: 422 },
  'x-messages': { required: 'email is required', type: 'fields must be strings' },
} as const;

/** Changes: unknown fields are removed before the rules, so they do not count towards minProperties. */
export const changesSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { title: { type: 'string' } },
  'x-error': { status: 400 },
  'x-messages': { minProperties: 'nothing to change' },
} as const;

/**
 * A query that answers `{error}`: `q` required, `page` digits; a parameter given twice is a list,
 * which no string rule takes.
 */
export const searchSchema = {
  type: 'object',
  required: ['q'],
  properties: {
    q: { type: 'string', 'x-messages': 'q is required, once' },
    page: { type: 'string', pattern: '^[0-9]+$', 'x-messages': 'page must be a number' },
  },
  'x-error': { status: 400 },
} as const;

/** A small app made only of the shared middlewares, as a service would assemble them. */
export function testApp(ready = true) {
  const logs = captureLogger('koa-test');
  const router = new Router<AppState>();
  router.param('id', validateParam(objectIdParamSchema));
  router.get('/protected', requireAuth(verifierWithoutRevocations()), (ctx) => {
    ctx.body = { userId: ctx.state.userId };
  });
  router.get('/optional', optionalAuth(verifierWithoutRevocations()), (ctx) => {
    ctx.body = { userId: ctx.state.userId ?? null };
  });
  router.get('/things/:id', (ctx) => {
    ctx.body = { id: ctx.params.id };
  });
  router.post('/validated', validateBody(stepSchema), (ctx) => {
    ctx.body = bodyOf(ctx);
  });
  router.post('/answered', validateBody(answeredSchema), (ctx) => {
    ctx.body = bodyOf(ctx);
  });
  router.patch('/changes', validateBody(changesSchema), (ctx) => {
    ctx.body = bodyOf(ctx);
  });
  router.get('/search', validateQuery(searchSchema), (ctx) => {
    ctx.body = ctx.query;
  });
  router.post('/nothing', noBody(), (ctx) => {
    ctx.body = bodyOf(ctx);
  });
  router.put('/things/:id', (ctx) => {
    ctx.body = bodyOf(ctx);
  });
  router.get('/explodes', () => {
    throw new Error('secret internal detail: mongodb://user:pass@db');
  });
  router.get('/explodes-with-message', failureMessage('Failed to do the thing'), () => {
    throw new TypeError('cannot read properties of undefined');
  });
  router.get('/db-away', () => {
    throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:27017'), { name: 'MongoServerSelectionError' });
  });
  const app = createServiceApp({
    name: 'koa-test',
    logger: logs.logger,
    routers: [router],
    readiness: { database: async () => ready },
    tokens: verifierWithoutRevocations(),
  });
  return { app, http: request(app.callback()), logs };
}
