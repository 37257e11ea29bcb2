/**
 * Imported first by every server (`import '@cs/telemetry/start'`): starts tracing when it is
 * configured, before the app and its clients are built (they ask `tracingOn`). Does nothing otherwise.
 */
import { startTracing } from './tracing';

startTracing();
