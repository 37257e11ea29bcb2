export * from './metrics';
export { startTracing, stopTracing, tracingConfigured } from './tracing';
