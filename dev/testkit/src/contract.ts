/**
 * supertest, with every response checked against the OpenAPI document: an undeclared status, a
 * wrong media type or a body that breaks the declared schema fails the test that received it.
 * Routes the document does not cover (internal ones, /healthz of a service) are not checked.
 */
import type { RequestListener } from 'node:http';
import { createConformanceChecker } from '@cs/contract';
import request from 'supertest';

const checker = createConformanceChecker();
const METHODS = ['get', 'post', 'put', 'delete', 'patch', 'head', 'options'] as const;

export class ContractViolation extends Error {
  constructor(violations: string[]) {
    super(`The response does not match the OpenAPI document:\n  ${violations.join('\n  ')}`);
    this.name = 'ContractViolation';
  }
}

type Agent = ReturnType<typeof request>;

export function checkAgainstContract(res: request.Response, method: string, url: string): void {
  const path = new URL(url, 'http://x').pathname;
  const violations = checker.check({
    method,
    path,
    status: res.status,
    contentType: res.headers['content-type'],
    body: res.body,
    text: res.text ?? '',
  });
  if (violations.length > 0) throw new ContractViolation(violations);
}

/** `request(target)`, checking each response against the contract when it arrives. */
export function api(target: RequestListener | string): Agent {
  const agent = request(target);
  for (const method of METHODS) {
    const original = agent[method].bind(agent);
    (agent as unknown as Record<string, unknown>)[method] = (url: string) => {
      const test = original(url);
      const then = test.then.bind(test);
      // Every await (and every .expect chain, which ends in one) goes through then().
      // biome-ignore lint/suspicious/noThenProperty: supertest's Test is a thenable; wrapping then() is how every await is checked
      test.then = ((onFulfilled, onRejected) =>
        then((res) => {
          checkAgainstContract(res, method.toUpperCase(), url);
          return res;
        }).then(onFulfilled, onRejected)) as typeof test.then;
      return test;
    };
  }
  return agent;
}
