/**
 * Each route is in the API document once. A route also served under the other prefix (`/api` or
 * none) says so in its description ("Also served at `/api/upload-url`."), and the gateway routes
 * that path the same way: same owner, same auth rule.
 */
import { createConformanceChecker, openApiDocument, ROUTE_ALIASES } from '@cs/contract';
import { describe, expect, it } from '@jest/globals';
import { routeTemplate } from '../src/metrics';
import { resolveRoute } from '../src/route-table';

const SAMPLE = { id: '0123456789abcdef01234567', uploadId: '01234567-89ab-4def-8123-456789abcdef' };
const concrete = (template: string) =>
  template.replace(/\{(\w+)\}/g, (_, name: string) => SAMPLE[name as keyof typeof SAMPLE] ?? name);

type Operations = Record<string, { description?: string }>;
const documented = Object.entries(openApiDocument.paths as unknown as Record<string, Operations>);

describe('routes served under two prefixes, in the API document', () => {
  it('when the document is read, then no route is in it under both prefixes', () => {
    const paths = new Set(documented.map(([path]) => path));
    const twice = [...paths].filter((path) => !path.startsWith('/api/') && paths.has(`/api${path}`));
    expect(twice).toEqual([]);
  });

  it('when an operation says it is also served at another path, then the gateway routes that path as the documented one', () => {
    let aliases = 0;
    for (const [path, operations] of documented) {
      for (const [method, operation] of Object.entries(operations)) {
        const alias = /Also served at `([^`]+)`\./.exec(operation.description ?? '')?.[1];
        if (!alias) continue;
        aliases += 1;
        expect(documented.some(([other]) => other === alias)).toBe(false);
        const route = resolveRoute(method.toUpperCase(), concrete(path));
        expect(route).toBeDefined();
        expect({ alias, route: resolveRoute(method.toUpperCase(), concrete(alias)) }).toEqual({ alias, route });
      }
    }
    // /upload-url, the attachment link, and the five operations of a file in parts.
    expect(aliases).toBe(7);
  });

  it('when a request comes by an alias, then its metrics and its conformance check are the documented route’s', () => {
    const checker = createConformanceChecker();
    for (const [alias, template] of Object.entries(ROUTE_ALIASES)) {
      expect({ alias, label: routeTemplate(concrete(alias)) }).toEqual({ alias, label: template });
      const method = Object.keys((openApiDocument.paths as unknown as Record<string, Operations>)[template] ?? {})[0];
      expect({ alias, operation: checker.operationOf(method ?? 'get', concrete(alias)) }).toEqual({
        alias,
        operation: template,
      });
    }
  });
});
