/**
 * Holds every route of an app to the OpenAPI document: each path parameter is validated, with the
 * document's schema when the route is documented; a documented body is validated with the very
 * schema object the document declares; and a route that can take a body (POST, PUT, PATCH) says
 * what it takes, a schema or none. Routes come from routeRules(app) of `@cs/koa`.
 */
import { openApiDocument } from '@cs/contract';
import type { RouteRules } from '@cs/koa';

interface Operation {
  parameters?: { in: string; name: string; schema: object }[];
  requestBody?: { content: Record<string, { schema: { $ref?: string } }> };
}

const TAKES_BODY = new Set(['POST', 'PUT', 'PATCH']);
const paths = openApiDocument.paths as unknown as Record<string, Record<string, Operation>>;
const schemas = openApiDocument.components.schemas as unknown as Record<string, object>;

function documentedBody(operation: Operation | undefined): object | undefined {
  const schema = operation?.requestBody?.content['application/json']?.schema;
  return schema?.$ref ? schemas[schema.$ref.split('/').pop() as string] : schema;
}

/** What is wrong, one line a route and rule; empty when every route holds. */
export function requestRuleGaps(routes: readonly RouteRules[]): string[] {
  const gaps: string[] = [];
  for (const route of routes) {
    const where = `${route.method} ${route.path}`;
    const operation = paths[route.path.replace(/:(\w+)/g, '{$1}')]?.[route.method.toLowerCase()];
    for (const [name, schema] of Object.entries(route.params)) {
      const documented = operation?.parameters?.find((p) => p.in === 'path' && p.name === name)?.schema;
      if (!schema) gaps.push(`${where}: :${name} is not validated (router.param with validateParam)`);
      else if (operation && schema !== documented)
        gaps.push(`${where}: :${name} is not validated with the document's schema`);
    }
    const body = documentedBody(operation);
    if (body && route.body !== body) {
      gaps.push(`${where}: the body is ${route.body ? "not validated with the document's schema" : 'not validated'}`);
    } else if (!body && operation && route.body !== undefined && route.body !== 'none') {
      gaps.push(`${where}: validates a body the document does not declare`);
    } else if (!body && TAKES_BODY.has(route.method) && route.body === undefined) {
      gaps.push(`${where}: takes a body without a schema (validateBody), or must say it takes none (noBody)`);
    }
  }
  return gaps;
}
