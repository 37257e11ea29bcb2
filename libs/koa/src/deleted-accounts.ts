/**
 * Deleting an account everywhere, the services' side. Identity deletes the user, then calls
 * `POST /internal/users/deleted` on every service with a token of that user, again until it gets
 * a 204. A service records a tombstone and purges what the user owns (`@cs/mongo`
 * createDeletedAccounts). Identity also revokes the user's tokens, but that reaches a service
 * within a second or so: writes look at the tombstones as well, so that none outlives the purge.
 */
import { HttpError, messages } from '@cs/errors';
import Router from '@koa/router';
import { requireInternalCaller } from './auth';
import type { AppMiddleware, AppState } from './context';
import { noBody } from './validate';

export interface DeletedAccountsCheck {
  isDeleted(userId: string): Promise<boolean>;
  /** isDeleted from a recent answer (a "not deleted" is trusted for a few seconds). */
  isDeletedLately(userId: string): Promise<boolean>;
  /**
   * After a write that looked at `lookedAt`: whether the account is deleted now and the write
   * must go (a write answered soon after its look is left to the second purge: no lookup).
   */
  deletedSince(userId: string, lookedAt: number): Promise<boolean>;
  /** Deletes everything the user owns in this service; idempotent. */
  purge(userId: string): Promise<void>;
}

const isSuccess = (status: number) => status >= 200 && status < 300;

/**
 * After requireAuth, on every route that creates or changes the caller's data: a deleted
 * account's write is 401 invalid-or-expired-token before the handler runs.
 *
 * The look is from memory (a "not deleted" is trusted for a few seconds), so a write can pass it
 * after the account was deleted elsewhere, and land after the deleter's purge. It does not
 * survive: the tombstone carries a second purge, due once every write answered soon after its
 * look has landed; a slower write looks the tombstone up again after it (`deletedSince`). A
 * deletion known in this process is seen at once, after the handler too: then this purges the
 * user itself and answers 401. No lookup on a write's path otherwise (`@cs/mongo`
 * createDeletedAccounts). That holds for the writes the handler awaits: one it leaves running in
 * the background is not covered.
 */
export function refuseDeletedAccounts(accounts: DeletedAccountsCheck): AppMiddleware {
  return async function refuseDeletedAccounts(ctx, next) {
    const userId = ctx.state.userId;
    // Fails closed: mounted without requireAuth in front, it would let every write through.
    if (userId === undefined) throw new Error('refuseDeletedAccounts needs requireAuth before it');
    const lookedAt = Date.now();
    if (await accounts.isDeletedLately(userId)) throw new HttpError(401, messages.invalidToken);
    await next();
    if (isSuccess(ctx.status) && (await accounts.deletedSince(userId, lookedAt))) {
      await accounts.purge(userId);
      throw new HttpError(401, messages.invalidToken);
    }
  };
}

/**
 * For routes that only sign a link and write nothing to the database (`/upload-url`, part links):
 * a deleted account gets 401 too, from the same recent answer, which costs no lookup (one would
 * cost more than signing, `npm run bench`, scenario 5). Nothing after: nothing lands that it could
 * catch. A link another replica issues in the few seconds before it learns of the deletion leads,
 * at most, to an object never claimed, which the sweeper deletes with every unclaimed object, or
 * claimed in the same window (refuseDeletedAccounts) and removed by the tombstone's second purge.
 */
export function refuseDeletedAccountLinks(accounts: Pick<DeletedAccountsCheck, 'isDeletedLately'>): AppMiddleware {
  return async function refuseDeletedAccountLinks(ctx, next) {
    const userId = ctx.state.userId;
    if (userId === undefined) throw new Error('refuseDeletedAccountLinks needs requireAuth before it');
    if (await accounts.isDeletedLately(userId)) throw new HttpError(401, messages.invalidToken);
    await next();
  };
}

/**
 * `POST /internal/users/deleted`, with a token of the deleted user and no body: 204 once the
 * tombstone is written and the user's data here is gone; again 204 on every repeat. Any other
 * answer tells identity to try again later. The gateway never routes `/internal`.
 */
export function deletedAccountRoutes(
  accounts: { deleteAccount(userId: string): Promise<void> },
  { secret }: { secret: string },
): Router<AppState> {
  const router = new Router<AppState>();
  router.post('/internal/users/deleted', requireInternalCaller({ secret }), noBody(), async (ctx) => {
    await accounts.deleteAccount(ctx.state.userId as string);
    ctx.status = 204;
  });
  return router;
}
