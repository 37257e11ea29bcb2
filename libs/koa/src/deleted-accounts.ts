/**
 * Deleting an account everywhere, the services' side. Identity deletes the user, then calls
 * `POST /internal/users/deleted` on every service with a token of that user, again until it gets
 * a 204. A service records a tombstone and purges what the user owns (`@cs/mongo`
 * createDeletedAccounts). Identity also revokes the user's tokens, but that reaches a service
 * within a second or so: writes look the tombstone up as well, so that none lands after the purge.
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
  /** Deletes everything the user owns in this service; idempotent. */
  purge(userId: string): Promise<void>;
}

const isSuccess = (status: number) => status >= 200 && status < 300;

/**
 * After requireAuth, on every route that creates or changes the caller's data: a deleted
 * account's write is 401 invalid-or-expired-token before the handler runs.
 *
 * One look before the handler is not enough: the write it lets through can land after the
 * deleter's purge, and survive it. So after a 2xx the tombstone is looked up again, and when it is
 * there now, this purges the user itself and answers 401. The write landed either before the
 * tombstone, and so before the deleter's purge (which starts after the tombstone) read what to
 * delete: that purge removes it; or after the tombstone, and so before the second look, which then
 * sees it: this purge removes it. That holds where a read sees every write acknowledged before it
 * (one server, or a replica set's primary), and for the writes the handler awaits: one it leaves
 * running in the background is not covered. Should this purge fail, the answer is a 5xx and that
 * write can stay.
 */
export function refuseDeletedAccounts(accounts: DeletedAccountsCheck): AppMiddleware {
  return async function refuseDeletedAccounts(ctx, next) {
    const userId = ctx.state.userId;
    // Fails closed: mounted without requireAuth in front, it would let every write through.
    if (userId === undefined) throw new Error('refuseDeletedAccounts needs requireAuth before it');
    if (await accounts.isDeleted(userId)) throw new HttpError(401, messages.invalidToken);
    await next();
    if (isSuccess(ctx.status) && (await accounts.isDeleted(userId))) {
      await accounts.purge(userId);
      throw new HttpError(401, messages.invalidToken);
    }
  };
}

/**
 * For routes that only sign a link and write nothing to the database (`/upload-url`, part links):
 * a deleted account gets 401 too, from a recent answer rather than a lookup per request, which
 * would cost more than signing (`npm run bench`, scenario 5). No second look: nothing lands that
 * it could catch. A link another replica issues in the few seconds before it learns of the
 * deletion leads, at most, to an object that can never be claimed (claims are checked with a
 * lookup, by refuseDeletedAccounts), and that the sweeper deletes with every unclaimed object.
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
