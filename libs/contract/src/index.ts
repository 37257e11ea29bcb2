export { createConformanceChecker, type ObservedResponse } from './conformance';
export { API_VERSION, openApiDocument } from './openapi';
export * from './schemas';
