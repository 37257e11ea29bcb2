import { type AppState, bodyOf, failureMessage, requireAuth } from '@cs/koa';
import Router from '@koa/router';
import { messages } from './schemas';
import { readKey, readUploadRequest, type UploadRules } from './upload-input';
import type { Uploads } from './uploads';

/** `POST /upload-url` (and under /api): what browsers call, through the gateway. */
export function uploadRoutes(
  uploads: Uploads,
  { secret, rules }: { secret: string; rules: UploadRules },
): Router<AppState> {
  const router = new Router<AppState>();
  router.post(
    ['/upload-url', '/api/upload-url'],
    requireAuth({ secret }),
    failureMessage(messages.uploadUrlFailed),
    async (ctx) => {
      ctx.body = await uploads.issue(ctx.state.userId as string, readUploadRequest(bodyOf(ctx), rules));
    },
  );
  return router;
}

/**
 * What the notes service calls, with the caller's own token. The gateway never routes
 * `/internal`, and every operation checks that the key belongs to the caller.
 */
export function internalRoutes(uploads: Uploads, { secret }: { secret: string }): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/internal/uploads' });
  router.use(requireAuth({ secret }));

  router.post('/claim', async (ctx) => {
    ctx.body = await uploads.claim(ctx.state.userId as string, readKey(bodyOf(ctx)));
  });
  router.post('/download-link', async (ctx) => {
    ctx.body = await uploads.signDownload(ctx.state.userId as string, readKey(bodyOf(ctx)));
  });
  router.post('/release', async (ctx) => {
    await uploads.release(ctx.state.userId as string, readKey(bodyOf(ctx)));
    ctx.status = 204;
  });
  return router;
}
