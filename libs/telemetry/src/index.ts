export * from './metrics';
export * from './spans';
export { startTracing, stopTracing, tracingConfigured, tracingOn } from './tracing';
