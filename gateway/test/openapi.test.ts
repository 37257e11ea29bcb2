import { API_VERSION, openApiDocument } from '@cs/contract';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resolveRoute } from '../src/route-table';
import { echoUpstream, everyUpstreamAt, type GatewayProcess, spawnGateway } from './helpers';

let gateway: GatewayProcess;
let upstream: Awaited<ReturnType<typeof echoUpstream>>;

beforeAll(async () => {
  upstream = await echoUpstream();
  gateway = await spawnGateway(everyUpstreamAt(upstream.url));
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

const SAMPLE_ID = '0123456789abcdef01234567';
const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

describe('the API document', () => {
  it('when /openapi.json is fetched, then it is the OpenAPI 3.1 document the tests check against', async () => {
    const res = await fetch(`${gateway.url}/openapi.json`);

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const doc = (await res.json()) as typeof openApiDocument;
    expect(doc).toEqual(JSON.parse(JSON.stringify(openApiDocument)));
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe(API_VERSION);
  });

  it('when /docs is opened, then a reference page and its assets come from the gateway itself', async () => {
    const page = await fetch(`${gateway.url}/docs`);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('/docs/assets/swagger-ui-bundle.js');
    expect(html).not.toMatch(/https?:\/\//);

    for (const asset of ['/docs/assets/swagger-ui-bundle.js', '/docs/assets/swagger-ui.css', '/docs/init.js']) {
      const res = await fetch(`${gateway.url}${asset}`);
      expect(res.status).toBe(200);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0);
    }
    expect((await fetch(`${gateway.url}/docs/assets/package.json`)).status).toBe(404);
    expect((await fetch(`${gateway.url}/docs/assets/..%2Fpackage.json`)).status).toBe(404);
  });

  it('when each documented operation is looked up in the routing table, then the gateway routes it with the same auth rule', () => {
    for (const [template, item] of Object.entries(openApiDocument.paths)) {
      if (template === '/healthz' || template === '/readyz') continue;
      const path = template.replace('{id}', SAMPLE_ID);
      for (const method of HTTP_METHODS) {
        const op = (item as Record<string, { security?: Record<string, unknown>[] } | undefined>)[method];
        if (!op) continue;
        const route = resolveRoute(method.toUpperCase(), path);
        expect({ template, method, routed: route !== undefined }).toEqual({ template, method, routed: true });
        const documented =
          op.security?.length === 0
            ? 'none'
            : op.security?.some((s) => Object.keys(s).length === 0)
              ? 'optional'
              : 'required';
        // Logout's rule (a token, when sent, must be ours, expired or revoked as it may be) is documented as optional.
        const auth = route?.auth === 'signed' ? 'optional' : route?.auth;
        expect({ template, method, auth }).toEqual({ template, method, auth: documented });
      }
    }
  });

  it('when a protected operation is documented, then it declares 401 and the bearer scheme', () => {
    for (const item of Object.values(openApiDocument.paths)) {
      for (const op of Object.values(item) as {
        security?: Record<string, unknown>[];
        responses: Record<string, unknown>;
      }[]) {
        if (op.security?.some((s) => 'bearerAuth' in s)) expect(op.responses).toHaveProperty('401');
      }
    }
  });

  it('when an error answer other than 400 is documented, then its example is {error} alone, as the answers are', () => {
    type Answer = { $ref?: string; content?: Record<string, { schema?: { $ref?: string }; example?: unknown }> };
    const shared = openApiDocument.components.responses as Record<string, Answer>;
    const examples: Record<string, unknown> = {};
    for (const [path, item] of Object.entries(openApiDocument.paths)) {
      for (const [method, op] of Object.entries(item) as [string, { responses: Record<string, Answer> }][]) {
        for (const [status, documented] of Object.entries(op.responses)) {
          if (Number(status) < 401) continue;
          const answer = documented.$ref ? shared[documented.$ref.split('/').pop() as string] : documented;
          const json = answer?.content?.['application/json'];
          if (json?.schema?.$ref === '#/components/schemas/Error') {
            examples[`${method.toUpperCase()} ${path} ${status}`] = json.example;
          }
        }
      }
    }

    expect(Object.keys(examples).length).toBeGreaterThan(50);
    for (const [answer, example] of Object.entries(examples)) {
      expect([answer, example]).toEqual([answer, { error: expect.stringMatching(/\S/) }]);
    }
  });
});
