/**
 * Imported first by every server (`import '@cs/telemetry/start'`): starts tracing when it is
 * configured, before the modules it instruments are loaded. Does nothing otherwise.
 */
import { startTracing } from './tracing';

startTracing();
