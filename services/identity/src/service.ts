import { repeatEvery, SERVICE_KEEP_ALIVE_TIMEOUT_MS } from '@cs/lifecycle';
import type { PartDefinition } from '@cs/service';
import { createApp } from './app';
import { type Config, readConfig } from './config';
import { createMailer } from './password-reset/mailer';

const TEN_MINUTES = 10 * 60_000;

/** Identity: its configuration, and what it starts and stops around its app. */
export const identityService: PartDefinition<Config> = {
  name: 'identity',
  readConfig,
  keepAliveTimeoutMs: SERVICE_KEEP_ALIVE_TIMEOUT_MS,
  build: async (deps) => {
    const { config, logger } = deps;
    const mailer = createMailer(config.SMTP_URL, config.MAIL_FROM);
    if (!mailer) logger.warn('SMTP_URL is not set: password reset, e-mail verification and e-mail change answer 503');
    const built = await createApp({ ...deps, mailer });
    const { app, throttle, resets, verifications, changes, deletions, turns, followLog, sessions, oidc } = built;
    const following = followLog();
    const warn = (what: string) => (err: unknown) => logger.warn({ err }, what);
    return {
      app,
      stops: [
        throttle.startPruning(warn('could not prune login failures')),
        turns.startPruning(),
        repeatEvery(TEN_MINUTES, resets.prune, warn('could not prune password resets')),
        repeatEvery(TEN_MINUTES, sessions.prune, warn('could not prune old sessions')),
        repeatEvery(TEN_MINUTES, oidc.prune, warn('could not prune sign-ins with providers')),
        // Discovery at start, then again for each provider that has not answered yet.
        oidc.discover(config.OIDC_DISCOVERY_INTERVAL, warn('a sign-in provider cannot be reached')),
        repeatEvery(TEN_MINUTES, verifications.prune, warn('could not prune e-mail verification links')),
        repeatEvery(TEN_MINUTES, changes.prune, warn('could not prune e-mail change links')),
        deletions.start(config.DELETION_OUTBOX_INTERVAL),
        following.stop,
      ],
      onClose: async () => mailer?.close(),
    };
  },
};
