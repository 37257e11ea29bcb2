import { routeRules } from '@cs/koa';
import { requestRuleGaps } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type FilesHarness, startFiles } from './helpers';

let h: FilesHarness;

beforeAll(async () => {
  h = await startFiles(__filename);
});
afterAll(async () => {
  await h.close();
});

describe('the request rules of every route', () => {
  it('when the app is built, then each body and path parameter is validated by its schema in the OpenAPI document', () => {
    const routes = routeRules(h.app);

    expect(routes.map((r) => `${r.method} ${r.path}`)).toContain('POST /internal/uploads/claim');
    expect(requestRuleGaps(routes)).toEqual([]);
  });
});
