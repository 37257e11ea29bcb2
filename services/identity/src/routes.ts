import { type AppState, bodyOf, failureMessage, requireAuth } from '@cs/koa';
import Router from '@koa/router';
import type { Accounts } from './accounts';
import { checkEmail, messages, normalizeEmail, readCredentials, readStrings } from './credentials';
import type { PasswordResets } from './password-reset';

/** The client's address, set by the gateway (which drops any a client sends: x-internal-*). */
export const CLIENT_ADDRESS_HEADER = 'x-internal-client-address';

export function authRoutes(
  { accounts, resets }: { accounts: Accounts; resets: PasswordResets },
  { secret }: { secret: string },
): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api/auth' });
  const authenticated = requireAuth({ secret });
  const clientAddress = (ctx: { get(name: string): string }) => ctx.get(CLIENT_ADDRESS_HEADER) || 'unknown';

  router.post('/register', failureMessage(messages.registrationFailed), async (ctx) => {
    const token = await accounts.register(readCredentials(bodyOf(ctx)));
    ctx.status = 201;
    ctx.body = { token };
  });

  router.post('/login', failureMessage(messages.loginFailed), async (ctx) => {
    const token = await accounts.login(readCredentials(bodyOf(ctx)), clientAddress(ctx));
    ctx.body = { token };
  });

  router.put('/password', authenticated, failureMessage(messages.passwordChangeFailed), async (ctx) => {
    const passwords = readStrings(bodyOf(ctx), ['currentPassword', 'newPassword'], {
      required: messages.passwordChangeRequired,
      notStrings: messages.passwordChangeNotStrings,
    });
    ctx.body = { token: await accounts.changePassword(ctx.state.userId as string, passwords, clientAddress(ctx)) };
  });

  router.delete('/account', authenticated, failureMessage(messages.accountDeletionFailed), async (ctx) => {
    const { password } = readStrings(bodyOf(ctx), ['password'], {
      required: messages.passwordRequired,
      notStrings: messages.passwordNotString,
    });
    await accounts.deleteAccount(ctx.state.userId as string, password, clientAddress(ctx));
    ctx.status = 204;
  });

  router.post('/password-reset', failureMessage(messages.resetFailed), async (ctx) => {
    const { email } = readStrings(bodyOf(ctx), ['email'], {
      required: messages.emailRequired,
      notStrings: messages.emailNotString,
    });
    const normalized = normalizeEmail(email);
    checkEmail(normalized);
    await resets.request(normalized);
    ctx.status = 202;
    ctx.body = { message: messages.resetAccepted };
  });

  router.post('/password-reset/confirm', failureMessage(messages.resetFailed), async (ctx) => {
    const { token, newPassword } = readStrings(bodyOf(ctx), ['token', 'newPassword'], {
      required: messages.resetRequired,
      notStrings: messages.resetNotStrings,
    });
    await resets.confirm(token, newPassword);
    ctx.status = 204;
  });

  return router;
}
