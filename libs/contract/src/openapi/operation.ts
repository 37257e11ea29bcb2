/**
 * An operation of the document, from a short spec: its parameters, its security, and every answer
 * it may give.
 */
import { ROUTE_ALIASES } from '../route-aliases';
import * as s from '../schemas';
import { slot } from './examples';
import { type ErrorName, response, type Schema, STATUS } from './responses';

export type AuthRule = 'required' | 'optional' | 'none';

/** The last line of the description of a route that another path serves too (documented once, here). */
export function alsoServedAt(path: string): string {
  if (!(path in ROUTE_ALIASES)) throw new Error(`${path} is not in ROUTE_ALIASES`);
  return `Also served at \`${path}\`.`;
}

/** A path parameter `{id}`: what it names, and its example in the sequence of TRY_IT (a placeholder). */
export interface PathId {
  description: string;
  example: string;
}

export interface OperationSpec {
  id: string;
  /** One line, under 70 characters: what the operation does. */
  summary: string;
  /** The rest: rules, limits, statuses worth knowing. */
  description?: string;
  tag: string;
  auth: AuthRule;
  body?: Schema;
  /** The body that succeeds at this operation's step of TRY_IT, placeholders filled in. */
  example?: unknown;
  /** Query parameters: strings, unless `schema` says more (an enum, for a typed client). */
  query?: { name: string; description: string; required?: boolean; example?: string; schema?: Schema }[];
  pathId?: PathId;
  /** A multipart upload's id in the path: anything that is not one of the caller's is 404. */
  uploadId?: boolean;
  ok: { status: number; description: string; schema?: Schema };
  errors?: ErrorName[];
  /** A cacheable read: ETag on 200, and 304 when If-None-Match names it. */
  cached?: boolean;
  /** A keyset-paged list: `limit` and `cursor` in, the next page in a Link header. */
  paged?: { defaultLimit: number; maxLimit: number };
  /** A route of sessions that cookie mode changes: the X-Refresh-Token header (refresh-cookie.ts in identity). */
  refreshCookie?: boolean;
  /** The body may be left out (cookie mode's refresh and logout). */
  bodyOptional?: boolean;
}

export const LINK_HEADERS = {
  Link: {
    description:
      'The next page, when there is one: `</same/path?limit=…&cursor=…>; rel="next"` (RFC 8288). Follow it as it is; the cursor is opaque.',
    schema: { type: 'string' },
  },
};

export const ETAG_HEADERS = {
  ETag: { description: 'A validator of the body; send it back as If-None-Match.', schema: { type: 'string' } },
  'Cache-Control': {
    description: '`private, no-cache` on an anonymous read; `no-store` when the request carried a token.',
    schema: { type: 'string' },
  },
  'Server-Timing': {
    description:
      "db;dur=… (the database part) and app;dur=… (the whole request), in ms. Only when the gateway's SERVER_TIMING is on (off by default).",
    schema: { type: 'string' },
  },
};

export function operation({
  id,
  summary,
  description,
  tag,
  auth,
  body,
  example,
  query = [],
  pathId,
  uploadId = false,
  ok,
  errors = [],
  cached = false,
  paged,
  refreshCookie = false,
  bodyOptional = false,
}: OperationSpec) {
  const names = new Set<ErrorName>(errors);
  if (paged) {
    names.add('BadRequest');
    query = [
      ...query,
      {
        name: 'limit',
        description: `How many to give, 1 to ${paged.maxLimit} (default ${paged.defaultLimit}); a larger number gives ${paged.maxLimit}.`,
      },
      {
        name: 'cursor',
        description: 'Where the page starts: from the Link header of the page before. 400 when it is not one.',
      },
    ];
  }
  if (body) for (const n of ['BadRequest', 'PayloadTooLarge', 'UnsupportedMediaType'] as const) names.add(n);
  if (auth !== 'none') names.add('Unauthorized');
  if (refreshCookie) names.add('Forbidden');
  if (pathId) {
    names.add('BadRequest');
    names.add('NotFound');
  }
  if (uploadId) names.add('NotFound');
  for (const n of ['TooManyRequests', 'ServerError', 'BadGateway', 'Unavailable', 'GatewayTimeout'] as const)
    names.add(n);
  const responses: Record<string, unknown> = {
    [ok.status]: response(ok.description, ok.schema, cached ? ETAG_HEADERS : paged ? LINK_HEADERS : undefined),
  };
  if (cached) responses[304] = response('Not modified: the If-None-Match validator still names the current body.');
  for (const n of [...names].sort((a, b) => STATUS[a] - STATUS[b])) {
    responses[STATUS[n]] = { $ref: `#/components/responses/${n}` };
  }
  const ifNoneMatch = {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: 'An ETag from an earlier answer.',
    schema: { type: 'string' },
  };
  const cookieMode = {
    name: 'X-Refresh-Token',
    in: 'header',
    required: false,
    description:
      'Send `cookie` for cookie mode (a web client on the API’s own origin): the refresh token then lives in the `cs_refresh` cookie (HttpOnly; SameSite=Strict; Path=/api/auth; Secure behind HTTPS), answers carry `{token, expiresIn}`, and refresh and logout take no body. A request the browser marks cross-site is 403.',
    schema: { type: 'string', enum: ['cookie'] },
  };
  const parameters = [
    ...(cached ? [ifNoneMatch] : []),
    ...(refreshCookie ? [cookieMode] : []),
    ...(pathId
      ? [
          {
            name: 'id',
            in: 'path',
            required: true,
            description: pathId.description,
            schema: s.objectIdParamSchema,
            example: pathId.example,
          },
        ]
      : []),
    ...(uploadId
      ? [
          {
            name: 'uploadId',
            in: 'path',
            required: true,
            description: 'The id create answered (a UUID); another user’s is the same 404 as an unknown one.',
            schema: s.uploadIdParamSchema,
            example: slot('uploadId'),
          },
        ]
      : []),
    ...query.map((q) => ({
      name: q.name,
      in: 'query',
      required: q.required ?? false,
      description: q.description,
      schema: q.schema ?? { type: 'string' },
      ...(q.example === undefined ? {} : { example: q.example }),
    })),
  ];
  return {
    operationId: id,
    summary,
    ...(description ? { description } : {}),
    tags: [tag],
    ...(auth === 'required'
      ? { security: [{ bearerAuth: [] }] }
      : auth === 'optional'
        ? { security: [{}, { bearerAuth: [] }] }
        : { security: [] }),
    ...(parameters.length ? { parameters } : {}),
    ...(body
      ? {
          requestBody: {
            required: !bodyOptional,
            content: { 'application/json': { schema: body, ...(example === undefined ? {} : { example }) } },
          },
        }
      : {}),
    responses,
  };
}
