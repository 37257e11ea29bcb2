import { objectIdParamSchema } from '@cs/contract';
import { describe, expect, it } from '@jest/globals';
import { routeRules } from '../src';
import { answeredSchema, stepSchema, testApp } from './app';

describe('routeRules', () => {
  it('when an app is built, then each route is listed with its body’s schema and its parameters’', () => {
    const routes = routeRules(testApp().app);
    const route = (method: string, path: string) => routes.find((r) => r.method === method && r.path === path);

    expect(route('POST', '/validated')).toEqual({ method: 'POST', path: '/validated', body: stepSchema, params: {} });
    expect(route('POST', '/answered')?.body).toBe(answeredSchema);
    expect(route('POST', '/nothing')?.body).toBe('none');
    expect(route('GET', '/things/:id')).toEqual({
      method: 'GET',
      path: '/things/:id',
      body: undefined,
      params: { id: objectIdParamSchema },
    });
    expect(route('GET', '/healthz')).toEqual({ method: 'GET', path: '/healthz', body: undefined, params: {} });
  });

  it('when a route takes a body without a schema, then it is listed without one', () => {
    const routes = routeRules(testApp().app);

    expect(routes.find((r) => r.method === 'PUT' && r.path === '/things/:id')?.body).toBeUndefined();
  });
});
