/**
 * Checks a response against the OpenAPI document: the operation (method and path template), the
 * status among the declared ones, the media type, and the body against the declared schema.
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { openApiDocument } from './openapi';
import { servedTemplates } from './route-aliases';

type Doc = typeof openApiDocument;
type Operation = { responses: Record<string, { $ref?: string; content?: Record<string, { schema: unknown }> }> };

export interface ObservedResponse {
  method: string;
  /** The request path, without the query string. */
  path: string;
  status: number;
  contentType: string | undefined;
  body: unknown;
  /** The raw body text, to tell "no body" from "empty JSON". */
  text: string;
}

interface Route {
  template: string;
  pattern: RegExp;
  operations: Record<string, Operation>;
}

/** The document's routes, and their aliases (route-aliases.ts) as the routes they stand for. */
function routesOf(doc: Doc): Route[] {
  const paths = doc.paths as unknown as Record<string, Record<string, Operation>>;
  return servedTemplates(Object.keys(paths)).map(({ template, pattern }) => ({
    template,
    pattern,
    operations: paths[template] as Record<string, Operation>,
  }));
}

export function createConformanceChecker(doc: Doc = openApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'openapi', components: doc.components });
  const routes = routesOf(doc);
  const validators = new Map<string, ValidateFunction>();

  function validator(key: string, schema: unknown): ValidateFunction {
    let validate = validators.get(key);
    if (!validate) {
      // Refs in the document are local to it (#/components/...); resolve them against it.
      const text = JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/');
      validate = ajv.compile(JSON.parse(text) as object);
      validators.set(key, validate);
    }
    return validate;
  }

  return {
    /** The path template of a documented route, or undefined for routes the document does not cover. */
    operationOf(method: string, path: string): string | undefined {
      const route = routes.find((r) => r.pattern.test(path));
      return route?.operations[method.toLowerCase()] ? route.template : undefined;
    },

    /** Violations of the document; empty when the response conforms or the route is not a public one. */
    check(res: ObservedResponse): string[] {
      const route = routes.find((r) => r.pattern.test(res.path));
      const operation = route?.operations[res.method.toLowerCase()];
      if (!route || !operation) return [];
      const where = `${res.method} ${route.template} → ${res.status}`;
      let declared = operation.responses[String(res.status)];
      if (!declared) return [`${where}: status ${res.status} is not declared`];
      if (declared.$ref) {
        const name = declared.$ref.split('/').pop() as keyof Doc['components']['responses'];
        declared = doc.components.responses[name] as typeof declared;
      }
      if (!declared.content) return res.text === '' ? [] : [`${where}: declared without a body, but one was sent`];
      if (!res.contentType?.startsWith('application/json'))
        return [`${where}: content type ${res.contentType} is not application/json`];
      const schema = declared.content['application/json']?.schema;
      const validate = validator(`${route.template} ${res.method} ${res.status}`, schema);
      if (validate(res.body)) return [];
      return (validate.errors ?? []).map(
        (e) => `${where}: body${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`,
      );
    },
  };
}
