import type { TokenVerifier } from '@cs/auth';
import { createNoteSchema, LIMITS, objectIdParamSchema, updateNoteSchema } from '@cs/contract';
import {
  type AppState,
  type Bulkhead,
  bodyOf,
  type DeletedAccountsCheck,
  failureMessage,
  linkNext,
  readPageQuery,
  refuseDeletedAccounts,
  requireAuth,
  validateBody,
  validateParam,
  writesInTurn,
} from '@cs/koa';
import { decodeCursor, decodeSearchCursor } from '@cs/mongo';
import { readSearch } from '@cs/search';
import Router from '@koa/router';
import { messages } from './messages';
import { toNoteChanges, toNoteInput } from './note-input';
import type { Notes } from './notes';

/**
 * `accounts`: a deleted account's creates and updates are refused; reads and deletes are not
 * looked up. `writes`: the line writes take their account's turn in (`@cs/koa` write-turns.ts).
 */
export function noteRoutes(
  notes: Notes,
  { tokens, accounts, writes }: { tokens: TokenVerifier; accounts: DeletedAccountsCheck; writes: Bulkhead },
): Router<AppState> {
  const router = new Router<AppState>();
  router.use(['/api/notes', '/notes'], requireAuth(tokens));
  router.param('id', validateParam(objectIdParamSchema));
  const inTurn = writesInTurn(writes);
  const refuseDeleted = refuseDeletedAccounts(accounts);
  const caller = (ctx: { state: AppState }) => ctx.state.userId as string;
  const authorization = (ctx: { headers: Record<string, string | string[] | undefined> }) =>
    String(ctx.headers.authorization);

  router.post(
    '/api/notes',
    // Creates may share a place in the line, started together: their inserts go as one operation.
    writesInTurn(writes, { together: true }),
    refuseDeleted,
    validateBody(createNoteSchema),
    failureMessage(messages.createFailed),
    async (ctx) => {
      ctx.status = 201;
      ctx.body = await notes.create(caller(ctx), toNoteInput(bodyOf(ctx)), authorization(ctx));
    },
  );

  router.get('/api/notes', failureMessage(messages.fetchFailed), async (ctx) => {
    const pages = { defaultLimit: LIMITS.notesPageDefault, maxLimit: LIMITS.notesPageMax };
    const q = [ctx.query.q].flat()[0];
    const search = readSearch(q);
    if (search) {
      const query = readPageQuery(ctx.query, { ...pages, decode: decodeSearchCursor });
      const { items, next } = await notes.search(caller(ctx), search, query);
      linkNext(ctx, query.limit, next, { q: q as string });
      ctx.body = items;
      return;
    }
    const query = readPageQuery(ctx.query, { ...pages, decode: decodeCursor });
    const { items, next } = await notes.list(caller(ctx), query);
    linkNext(ctx, query.limit, next);
    ctx.body = items;
  });

  router.get('/api/notes/:id', failureMessage(messages.fetchFailed), async (ctx) => {
    ctx.body = await notes.get(ctx.params.id as string, caller(ctx));
  });

  router.put(
    '/api/notes/:id',
    inTurn,
    refuseDeleted,
    validateBody(updateNoteSchema),
    failureMessage(messages.updateFailed),
    async (ctx) => {
      ctx.body = await notes.update(
        ctx.params.id as string,
        caller(ctx),
        toNoteChanges(bodyOf(ctx)),
        authorization(ctx),
      );
    },
  );

  router.delete('/api/notes/:id', inTurn, failureMessage(messages.deleteFailed), async (ctx) => {
    await notes.remove(ctx.params.id as string, caller(ctx));
    ctx.status = 204;
  });

  router.get(
    ['/notes/:id/attachment', '/api/notes/:id/attachment'],
    failureMessage(messages.attachmentFailed),
    async (ctx) => {
      // `?thumb=`: a thumbnail's link instead; empty is absent, and a repeated one is not a size.
      const { thumb } = ctx.query;
      const size = Array.isArray(thumb) ? thumb.join(',') : thumb;
      ctx.body = await notes.attachmentLink(ctx.params.id as string, caller(ctx), authorization(ctx), size);
    },
  );

  return router;
}
