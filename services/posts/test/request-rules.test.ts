import { routeRules } from '@cs/koa';
import { requestRuleGaps } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type PostsHarness, startPosts } from './helpers';

let h: PostsHarness;

beforeAll(async () => {
  h = await startPosts(__filename);
});
afterAll(async () => {
  await h.stop();
});

describe('the request rules of every route', () => {
  it('when the app is built, then each body and path parameter is validated by its schema in the OpenAPI document', () => {
    const routes = routeRules(h.app);

    expect(routes.map((r) => `${r.method} ${r.path}`)).toContain('PUT /api/posts/:id');
    expect(requestRuleGaps(routes)).toEqual([]);
  });
});
