/**
 * Every route of an app with what it validates: its body's schema (or that it takes none) and
 * each path parameter's. Read from the routers themselves, so a test can hold every route of a
 * service to the OpenAPI document, including a route added tomorrow.
 */
import type Router from '@koa/router';
import type { SchemaObject } from 'ajv';
import type Koa from 'koa';
import { requestRuleOf } from './validate';

export interface RouteRules {
  method: string;
  /** As the router writes it, prefix included: `/api/posts/:id`. */
  path: string;
  /** The body's schema; 'none' for a route that says it takes no body; undefined when it says nothing. */
  body: SchemaObject | 'none' | undefined;
  /** Each path parameter's schema; undefined for one that is not validated. */
  params: Record<string, SchemaObject | undefined>;
}

/** A param middleware, as @koa/router wraps what router.param() was given. */
interface ParamMiddleware {
  param?: string;
  _originalFn?: unknown;
}

export function routeRules(app: Pick<Koa, 'middleware'>): RouteRules[] {
  const routes: RouteRules[] = [];
  for (const dispatch of app.middleware) {
    const router = (dispatch as { router?: Router }).router;
    if (!router) continue;
    for (const layer of router.stack) {
      if (layer.methods.length === 0) continue; // router.use(): middleware, not a route
      const params: RouteRules['params'] = Object.fromEntries(layer.paramNames.map(({ name }) => [name, undefined]));
      let body: RouteRules['body'];
      for (const middleware of layer.stack) {
        const { param, _originalFn } = middleware as ParamMiddleware;
        const rule = requestRuleOf(param === undefined ? middleware : _originalFn);
        if (param !== undefined && rule?.in === 'param') params[param] = rule.schema;
        else if (rule?.in === 'body') body = rule.schema;
        else if (rule?.in === 'none') body = 'none';
      }
      // HEAD is answered by the GET route: one entry for it is enough.
      for (const method of layer.methods.filter((m) => m !== 'HEAD'))
        routes.push({ method, path: String(layer.path), body, params });
    }
  }
  return routes;
}
