/**
 * The examples of the API document, tried as its introduction says: the numbered steps of
 * info.description in order, against the real system through the gateway, each placeholder
 * (`<postId>`) filled in from the answers before. Every step must answer the success status its
 * operation documents, and a body the document allows. A wrong example fails here, and so does an
 * operation that no step tries (unless its `x-try-it` says why it cannot be one), or a body or
 * required parameter without an example.
 */
import { createConformanceChecker, type openApiDocument } from '@cs/contract';
import type { RunningSystem } from '@cs/devstack';
import { eventually, startTestSystem, waitForMail } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  example?: unknown;
}

interface Operation {
  operationId: string;
  security?: Record<string, unknown>[];
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { example?: unknown }> };
  responses: Record<string, { content?: Record<string, unknown> }>;
  /** Why it is not a step: a sign-in with a provider needs a browser signed in there. */
  'x-try-it'?: string;
}

interface ApiDocument {
  info: { description: string };
  paths: Record<string, Record<string, Operation>>;
}

/** One numbered step: an operation of the document, or a PUT straight to storage (`PUT <url>`). */
interface Step {
  label: string;
  method: string;
  target: string;
}

/** A signed link an answer gave, for the storage step after it: the bytes to send and the headers. */
interface Link {
  url: string;
  headers: Record<string, string>;
  bytes: number;
}

type Answer = Record<string, unknown>;

let system: RunningSystem;
let doc: ApiDocument;

beforeAll(async () => {
  // Four logins, a register and a reset in a minute: more than the auth rate limit lets one address do.
  // And a verification link asked for within a minute of register's: more than the pace of mails.
  system = await startTestSystem({ env: { AUTH_RATE_LIMIT: '0', EMAIL_RESEND_INTERVAL: '0s' } });
  doc = (await (await fetch(`${system.gatewayUrl}/openapi.json`)).json()) as ApiDocument;
}, 60_000);
afterAll(async () => {
  await system?.stop();
});

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

function stepsOf(document: ApiDocument): Step[] {
  return [...document.info.description.matchAll(/^(\d+)\. `([A-Z]+) ([^`\s]+)`/gm)].map(([, n, method, target]) => ({
    label: `step ${n}, ${method} ${target}`,
    method: method as string,
    target: target as string,
  }));
}

function operationOf(step: Step): Operation | undefined {
  return doc.paths[step.target]?.[step.method.toLowerCase()];
}

/** The value with every `<name>` replaced by what an earlier step answered. */
function fill(value: unknown, known: ReadonlyMap<string, string>, where: string): unknown {
  if (typeof value === 'string') {
    return value.replace(/<(\w+)>/g, (_, name: string) => {
      const answered = known.get(name);
      if (answered === undefined) throw new Error(`${where}: no step before answered <${name}>`);
      return answered;
    });
  }
  if (Array.isArray(value)) return value.map((item) => fill(item, known, where));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, known, where)]));
  }
  return value;
}

const session = (body: Answer) => ({ token: String(body.token), refreshToken: String(body.refreshToken) });

/** What each operation's answer fills in for the steps after it (the document's list of placeholders). */
const FILLS: Record<string, (body: Answer) => Record<string, string>> = {
  register: session,
  login: session,
  refresh: session,
  changePassword: session,
  me: (body) => ({ userId: String(body._id) }),
  // Newest first: the last is the oldest session, register's (not the one the token belongs to).
  listSessions: (body) => ({ sessionId: String((body as unknown as { id: string }[]).at(-1)?.id) }),
  createPost: (body) => ({ postId: String(body._id) }),
  uploadUrl: (body) => ({ uploadKey: String(body.key) }),
  createNote: (body) => ({ noteId: String(body._id) }),
  createMultipartUpload: (body) => ({ uploadId: String(body.uploadId) }),
};

/** The links an answer gives for the storage step after it. */
function linksOf(operationId: string, body: Answer, sent: Record<string, unknown>): Link[] {
  if (operationId === 'uploadUrl') {
    const headers = body.headers as Record<string, string>;
    return [{ url: String(body.url), headers, bytes: Number(headers['Content-Length'] ?? sent.size) }];
  }
  if (operationId === 'signUploadParts') {
    return (body.parts as { url: string; headers: Record<string, string> }[]).map(({ url, headers }) => ({
      url,
      headers,
      bytes: Number(headers['Content-Length']),
    }));
  }
  return [];
}

interface Mailed {
  /** The placeholder the link's token fills. */
  placeholder: string;
  /** The web client's page the link opens. */
  page: string;
  /** Where it goes: the request's body says, or it is the account's address, as register's body gave it. */
  to: (body: Answer, account: string) => string;
}

/** The operations that mail a link (register sends the first verification link). */
const MAILED: Record<string, Mailed> = {
  register: { placeholder: 'verificationToken', page: 'verify-email', to: (body) => String(body.email) },
  requestPasswordReset: { placeholder: 'resetToken', page: 'reset-password', to: (body) => String(body.email) },
  requestEmailVerification: { placeholder: 'verificationToken', page: 'verify-email', to: (_, account) => account },
  requestEmailChange: {
    placeholder: 'emailChangeToken',
    page: 'confirm-email-change',
    to: (body) => String(body.newEmail),
  },
};

/**
 * The token of the newest link to `page` mailed to `to` since `since`, once it is not `before`: the
 * steps run faster than mail arrives, so for a moment the newest may be another step's mail.
 */
async function tokenSentTo(to: string, page: string, since: Date, before: string | undefined): Promise<string> {
  const link = new RegExp(`#/${page}\\?token=([^&\\s]+)`);
  const token = await eventually(
    `a new link to #/${page} mailed to ${to}`,
    async () => link.exec((await waitForMail(to, { since })).text)?.[1],
    (found) => found !== undefined && found !== before,
  );
  return decodeURIComponent(token ?? '');
}

describe('the examples of the API document, tried in the order its introduction gives', () => {
  it('when the document is read, then every operation is a step, and every body and required parameter has an example', () => {
    const steps = stepsOf(doc);
    expect(steps.length).toBeGreaterThan(0);
    const tried = new Set(steps.map((step) => `${step.method} ${step.target}`));
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        const name = `${method.toUpperCase()} ${path}`;
        // An operation that cannot be a step says why (a browser at an OpenID Connect provider).
        const exempt = typeof op['x-try-it'] === 'string' && op['x-try-it'].length > 0 && !tried.has(name);
        expect({ name, tried: tried.has(name) || exempt }).toEqual({ name, tried: true });
        if (op.requestBody) {
          expect({ name, example: op.requestBody.content['application/json']?.example !== undefined }).toEqual({
            name,
            example: true,
          });
        }
        for (const p of op.parameters ?? []) {
          if (p.required)
            expect({ name, parameter: p.name, example: p.example !== undefined }).toEqual({
              name,
              parameter: p.name,
              example: true,
            });
        }
      }
    }
    for (const step of steps) {
      if (step.target.startsWith('/'))
        expect({ step: step.label, documented: operationOf(step) !== undefined }).toEqual({
          step: step.label,
          documented: true,
        });
      else expect(step).toMatchObject({ method: 'PUT', target: '<url>' });
    }
  });

  it('when each step is sent with its example, the placeholders filled in from the answers before, then each answers its documented success', async () => {
    const checker = createConformanceChecker(doc as unknown as typeof openApiDocument);
    const known = new Map<string, string>();
    let links: Link[] = [];
    /** The account's address, as register's body gave it: where its verification links go. */
    let account = '';

    for (const step of stepsOf(doc)) {
      if (step.target === '<url>') {
        // Straight to storage, with the links the step before answered.
        expect({ step: step.label, links: links.length > 0 }).toEqual({ step: step.label, links: true });
        for (const link of links) {
          const put = await fetch(link.url, {
            method: 'PUT',
            headers: link.headers,
            body: Buffer.alloc(link.bytes, 'x'),
          });
          expect({ step: step.label, status: put.status }).toEqual({ step: step.label, status: 200 });
        }
        links = [];
        continue;
      }

      const op = operationOf(step);
      if (!op) throw new Error(`${step.label}: the document has no such operation`);
      const success = Number(Object.keys(op.responses).find((status) => /^2\d\d$/.test(status)));
      const parameters = op.parameters ?? [];
      const path = step.target.replace(/\{(\w+)\}/g, (_, name: string) => {
        const example = parameters.find((p) => p.in === 'path' && p.name === name)?.example;
        return encodeURIComponent(String(fill(example, known, step.label)));
      });
      const query = new URLSearchParams(
        parameters
          .filter((p) => p.in === 'query' && p.required)
          .map((p) => [p.name, String(fill(p.example, known, step.label))]),
      );
      const example = op.requestBody?.content['application/json']?.example;
      const body = example === undefined ? undefined : (fill(example, known, step.label) as Record<string, unknown>);
      const headers: Record<string, string> = {};
      if (body) headers['content-type'] = 'application/json';
      const token = known.get('token');
      if (token && op.security?.some((scheme) => 'bearerAuth' in scheme)) headers.authorization = `Bearer ${token}`;

      const sentAt = new Date(Date.now() - 1000);
      const url = `${system.gatewayUrl}${path}${query.toString() ? `?${query}` : ''}`;
      const streams = op.responses[success]?.content?.['text/event-stream'] !== undefined;
      const stop = new AbortController();
      const res = await fetch(url, {
        method: step.method,
        headers,
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: stop.signal,
      });
      if (streams) {
        // An event stream never ends: its status and media type are the answer.
        stop.abort();
        expect({ step: step.label, status: res.status, type: res.headers.get('content-type') }).toEqual({
          step: step.label,
          status: success,
          type: expect.stringMatching(/^text\/event-stream/),
        });
        continue;
      }
      const text = await res.text();
      expect({ step: step.label, status: res.status, ...(res.status === success ? {} : { answer: text }) }).toEqual({
        step: step.label,
        status: success,
      });
      const answer = (text ? JSON.parse(text) : undefined) as Answer;
      const violations = checker.check({
        method: step.method,
        path,
        status: res.status,
        contentType: res.headers.get('content-type') ?? undefined,
        body: answer,
        text,
      });
      expect({ step: step.label, violations }).toEqual({ step: step.label, violations: [] });

      for (const [name, value] of Object.entries(FILLS[op.operationId]?.(answer) ?? {})) known.set(name, value);
      if (op.operationId === 'register') account = String(body?.email);
      const mailed = MAILED[op.operationId];
      if (mailed) {
        const to = mailed.to(body ?? {}, account);
        known.set(mailed.placeholder, await tokenSentTo(to, mailed.page, sentAt, known.get(mailed.placeholder)));
      }
      const given = linksOf(op.operationId, answer, body ?? {});
      if (given.length > 0) links = given;
    }
  }, 120_000);
});
