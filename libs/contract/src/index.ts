export { createConformanceChecker, type ObservedResponse } from './conformance';
export * from './events';
export * from './limits';
export * from './messages';
export { API_VERSION, openApiDocument } from './openapi';
export * from './route-aliases';
export * from './schemas';
