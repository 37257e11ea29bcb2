import type { TokenVerifier } from '@cs/auth';
import {
  createPostSchema,
  LIMITS,
  objectIdParamSchema,
  patchPostSchema,
  postTagsSchema,
  updatePostSchema,
} from '@cs/contract';
import {
  type AppState,
  type Bulkhead,
  bodyOf,
  clientAddressOf,
  conditionalGet,
  type DeletedAccountsCheck,
  failureMessage,
  linkNext,
  optionalAuth,
  readPageQuery,
  refuseDeletedAccounts,
  requireAuth,
  serverTiming,
  validateBody,
  validateParam,
  writesInTurn,
} from '@cs/koa';
import { decodeCursor, decodeSearchCursor } from '@cs/mongo';
import { readSearch } from '@cs/search';
import Router from '@koa/router';
import { parseListQuery, toNewPost, toPostChanges, toPostPatch, toTags } from './post-input';
import type { Posts } from './posts';
import { messages } from './terms';

/** The domain call of a public read, timed as `db` in Server-Timing. */
const timed = <T>(ctx: { state: AppState }, work: Promise<T>) => ctx.state.timed?.('db', work) ?? work;

export interface PostRouteOptions {
  tokens: TokenVerifier;
  /** Deleted accounts: their writes are refused (reads and deletes are not looked up). */
  accounts: DeletedAccountsCheck;
  /** The line writes take their account's turn in (`@cs/koa` write-turns.ts). */
  writes: Bulkhead;
}

export function postRoutes(posts: Posts, { tokens, accounts, writes }: PostRouteOptions): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/posts' });
  const auth = requireAuth(tokens);
  const inTurn = writesInTurn(writes);
  const refuseDeleted = refuseDeletedAccounts(accounts);
  const write = [auth, inTurn, refuseDeleted] as const;
  // Creates may share a place in the line, started together: their inserts go as one operation.
  const create = [auth, writesInTurn(writes, { together: true }), refuseDeleted] as const;
  router.param('id', validateParam(objectIdParamSchema));

  router.get('/', serverTiming(), conditionalGet(), failureMessage(messages.fetchFailed), async (ctx) => {
    ctx.body = await timed(ctx, posts.listPublished(parseListQuery(ctx.query), clientAddressOf(ctx)));
  });

  // Matched before /:id, so "my-posts" is never read as an id.
  router.get('/my-posts', auth, failureMessage(messages.fetchFailed), async (ctx) => {
    // The contract's list of every post, capped: the rest, if any, through the Link header.
    const pages = { defaultLimit: LIMITS.myPostsPageMax, maxLimit: LIMITS.myPostsPageMax };
    const userId = ctx.state.userId as string;
    const q = [ctx.query.q].flat()[0];
    const search = readSearch(q);
    if (search) {
      const query = readPageQuery(ctx.query, { ...pages, decode: decodeSearchCursor });
      const { items, next } = await posts.searchMine(userId, search, query);
      linkNext(ctx, query.limit, next, { q: q as string });
      ctx.body = items;
      return;
    }
    const query = readPageQuery(ctx.query, { ...pages, decode: decodeCursor });
    const { items, next } = await posts.listMine(userId, query);
    linkNext(ctx, query.limit, next);
    ctx.body = items;
  });

  router.get(
    '/:id',
    serverTiming(),
    optionalAuth(tokens),
    conditionalGet(),
    failureMessage(messages.fetchOneFailed),
    async (ctx) => {
      ctx.body = await timed(ctx, posts.getVisible(ctx.params.id as string, ctx.state.userId, clientAddressOf(ctx)));
    },
  );

  router.post('/', ...create, validateBody(createPostSchema), failureMessage(messages.createFailed), async (ctx) => {
    ctx.status = 201;
    ctx.body = await posts.create(ctx.state.userId as string, toNewPost(bodyOf(ctx)));
  });

  router.put('/:id', ...write, validateBody(updatePostSchema), failureMessage(messages.updateFailed), async (ctx) => {
    ctx.body = await posts.update(ctx.params.id as string, ctx.state.userId as string, toPostChanges(bodyOf(ctx)));
  });

  // Ours, beside the contract's PUT (which ignores tags): a post's tags replaced, all at once.
  router.put(
    '/:id/tags',
    ...write,
    validateBody(postTagsSchema),
    failureMessage(messages.updateFailed),
    async (ctx) => {
      ctx.body = await posts.update(ctx.params.id as string, ctx.state.userId as string, { tags: toTags(bodyOf(ctx)) });
    },
  );

  // Ours too: any of title, body, status and tags, in the one write of `update`, or none of them.
  router.patch('/:id', ...write, validateBody(patchPostSchema), failureMessage(messages.updateFailed), async (ctx) => {
    ctx.body = await posts.update(ctx.params.id as string, ctx.state.userId as string, toPostPatch(bodyOf(ctx)));
  });

  router.delete('/:id', auth, inTurn, failureMessage(messages.deleteFailed), async (ctx) => {
    await posts.remove(ctx.params.id as string, ctx.state.userId as string);
    ctx.status = 204;
  });

  return router;
}
