import { routeRules } from '@cs/koa';
import { requestRuleGaps } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type IdentityHarness, startIdentity } from './helpers';

let h: IdentityHarness;

beforeAll(async () => {
  h = await startIdentity(__filename);
});
afterAll(async () => {
  await h.db.drop();
});

describe('the request rules of every route', () => {
  it('when the app is built, then each body and path parameter is validated by its schema in the OpenAPI document', () => {
    const routes = routeRules(h.app);

    expect(routes.map((r) => `${r.method} ${r.path}`)).toContain('POST /api/auth/register');
    expect(requestRuleGaps(routes)).toEqual([]);
  });
});
