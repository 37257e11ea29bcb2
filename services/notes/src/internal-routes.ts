import { attachmentRemovedSchema } from '@cs/contract';
import { type AppState, bodyOf, requireInternalCaller, validateBody } from '@cs/koa';
import Router from '@koa/router';
import type { Notes } from './notes';

/**
 * What the files service calls, with a short token of the note's author. The gateway never
 * routes `/internal`.
 */
export function internalRoutes(notes: Notes, { secret }: { secret: string }): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/internal' });
  router.use(requireInternalCaller({ secret }));

  /** `{key, reason}`: the object of `key` was removed; the author's note that holds it lets it go. 204. */
  router.post('/attachments/removed', validateBody(attachmentRemovedSchema), async (ctx) => {
    const { key, reason } = bodyOf(ctx) as { key: string; reason: string };
    await notes.attachmentRemoved(ctx.state.userId as string, key, reason);
    ctx.status = 204;
  });
  return router;
}
