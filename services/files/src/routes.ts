import type { TokenVerifier } from '@cs/auth';
import {
  multipartRequestSchema,
  partNumbersSchema,
  thumbnailLinkBodySchema,
  uploadIdParamSchema,
  uploadKeyBodySchema,
  uploadRequestSchema,
} from '@cs/contract';
import {
  type AppState,
  bodyOf,
  type DeletedAccountsCheck,
  failureMessage,
  noBody,
  refuseDeletedAccountLinks,
  refuseDeletedAccounts,
  requireAuth,
  requireInternalCaller,
  validateBody,
  validateParam,
} from '@cs/koa';
import Router from '@koa/router';
import { messages } from './messages';
import type { Multipart } from './multipart/multipart';
import type { Thumbnails } from './thumbnails/thumbnails';
import { toMultipartRequest, toUploadRequest, type UploadRules } from './uploads/upload-input';
import type { Uploads } from './uploads/uploads';

/** Every public router here: how tokens are verified, and deleted accounts, whose writes are refused (never their reads or deletes). */
interface RouteOptions {
  tokens: TokenVerifier;
  accounts: DeletedAccountsCheck;
}

/** `POST /upload-url` (and under /api): what browsers call, through the gateway. */
export function uploadRoutes(
  uploads: Uploads,
  { tokens, accounts, rules }: RouteOptions & { rules: UploadRules },
): Router<AppState> {
  const router = new Router<AppState>();
  router.post(
    ['/upload-url', '/api/upload-url'],
    requireAuth(tokens),
    refuseDeletedAccountLinks(accounts),
    validateBody(uploadRequestSchema),
    failureMessage(messages.uploadUrlFailed),
    async (ctx) => {
      ctx.body = await uploads.issue(ctx.state.userId as string, toUploadRequest(bodyOf(ctx), rules));
    },
  );
  return router;
}

/** What an upload may be, published so that a client checks a file before it asks for a link. */
export interface PublishedUploadRules {
  allowedTypes: readonly string[];
  /** The largest file sent in one PUT (`/upload-url`). */
  maxBytes: number;
  /** The largest file sent in parts (`/multipart-uploads`). */
  maxBytesMultipart: number;
}

/** `GET /api/upload-rules`: public, and the same for everyone until the service is configured otherwise. */
export function uploadRulesRoutes(rules: PublishedUploadRules): Router<AppState> {
  const router = new Router<AppState>();
  const body = {
    allowedTypes: [...rules.allowedTypes],
    maxBytes: rules.maxBytes,
    maxBytesMultipart: rules.maxBytesMultipart,
  };
  router.get('/api/upload-rules', (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = body;
  });
  return router;
}

/**
 * `/multipart-uploads` (and under /api): large files in parts, under the same rules as
 * `/upload-url`. Every route but create names an upload the caller owns; any other id, or
 * anything that cannot be one, is a 404.
 */
export function multipartRoutes(
  multipart: Multipart,
  { tokens, accounts, rules }: RouteOptions & { rules: UploadRules },
): Router<AppState> {
  const router = new Router<AppState>();
  router.param('uploadId', validateParam(uploadIdParamSchema));
  const paths = (suffix: string) => [`/multipart-uploads${suffix}`, `/api/multipart-uploads${suffix}`];
  const owner = (ctx: { state: AppState }) => ctx.state.userId as string;
  const auth = requireAuth(tokens);
  const failed = failureMessage(messages.multipartFailed);
  const guard = [auth, failed] as const;
  const write = [auth, refuseDeletedAccounts(accounts), failed] as const;
  const links = [auth, refuseDeletedAccountLinks(accounts), failed] as const;

  const uploadId = (ctx: { params: Record<string, string | undefined> }) => ctx.params.uploadId as string;

  router.post(paths(''), ...write, validateBody(multipartRequestSchema), async (ctx) => {
    ctx.status = 201;
    ctx.body = await multipart.create(owner(ctx), toMultipartRequest(bodyOf(ctx), rules));
  });
  router.get(paths('/:uploadId'), ...guard, async (ctx) => {
    ctx.body = await multipart.status(owner(ctx), uploadId(ctx));
  });
  router.post(paths('/:uploadId/part-urls'), ...links, validateBody(partNumbersSchema), async (ctx) => {
    const { partNumbers } = bodyOf(ctx) as { partNumbers: number[] };
    ctx.body = await multipart.signParts(owner(ctx), uploadId(ctx), partNumbers);
  });
  router.post(paths('/:uploadId/complete'), ...write, noBody(), async (ctx) => {
    ctx.body = await multipart.complete(owner(ctx), uploadId(ctx));
  });
  router.delete(paths('/:uploadId'), ...guard, async (ctx) => {
    await multipart.abort(owner(ctx), uploadId(ctx));
    ctx.status = 204;
  });
  return router;
}

/**
 * What the notes service calls, with the caller's own token. The gateway never routes
 * `/internal`, and every operation checks that the key belongs to the caller.
 */
export function internalRoutes(
  uploads: Uploads,
  { secret, accounts, thumbnails }: { secret: string; accounts: DeletedAccountsCheck; thumbnails: Thumbnails },
): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/internal/uploads' });
  // The caller's token, which notes verified (and checked against revocations) before calling.
  router.use(requireInternalCaller({ secret }));
  const key = (ctx: { request: unknown }) => (bodyOf(ctx) as { key: string }).key;
  const keyed = validateBody(uploadKeyBodySchema);

  router.post('/claim', refuseDeletedAccounts(accounts), keyed, async (ctx) => {
    ctx.body = await uploads.claim(ctx.state.userId as string, key(ctx));
  });
  router.post('/download-link', keyed, async (ctx) => {
    ctx.body = await uploads.signDownload(ctx.state.userId as string, key(ctx));
  });
  router.post('/thumbnail-link', validateBody(thumbnailLinkBodySchema), async (ctx) => {
    const { size } = bodyOf(ctx) as { size: string };
    ctx.body = await thumbnails.link(ctx.state.userId as string, key(ctx), size);
  });
  router.post('/release', keyed, async (ctx) => {
    await uploads.release(ctx.state.userId as string, key(ctx));
    ctx.status = 204;
  });
  return router;
}
