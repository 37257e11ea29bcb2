/**
 * The gateway and every service in one Node process (all.ts): how `npm start` runs the system, and
 * how a team runs it for good when one machine is enough. The gateway listens on PORT; each
 * service is hosted in memory, where the gateway and the services' calls to one another reach it
 * without a socket. Apart, each part runs from its own entry (services/<name>/dist/src/server.js,
 * gateway/dist/src/server.js), one container each in Compose; both ways start the same part
 * definitions.
 *
 * What one process gives up: a crash in one part takes the others with it, and one event loop
 * serves them all.
 */
import { startAll } from './all';

// startAll has logged why it could not start.
startAll(process.env, { handleSignals: true }).catch(() => process.exit(1));
