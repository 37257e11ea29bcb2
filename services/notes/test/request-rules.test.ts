import { routeRules } from '@cs/koa';
import { requestRuleGaps } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type NotesHarness, startNotes } from './helpers';

let h: NotesHarness;

beforeAll(async () => {
  h = await startNotes(__filename);
});
afterAll(async () => {
  await h.close();
});

describe('the request rules of every route', () => {
  it('when the app is built, then each body and path parameter is validated by its schema in the OpenAPI document', () => {
    const routes = routeRules(h.app);

    expect(routes.map((r) => `${r.method} ${r.path}`)).toContain('PUT /api/notes/:id');
    expect(requestRuleGaps(routes)).toEqual([]);
  });
});
