export { accessLog } from './access-log';
export { optionalAuth, requireAuth, requireInternalCaller } from './auth';
export { type Bulkhead, type BulkheadOptions, bulkheadRefusals, createBulkhead } from './bulkhead';
export { CLIENT_ADDRESS_HEADER, clientAddressOf } from './client-address';
export { conditionalGet } from './conditional-get';
export type { AppContext, AppMiddleware, AppState } from './context';
export {
  type DeletedAccountsCheck,
  deletedAccountRoutes,
  refuseDeletedAccountLinks,
  refuseDeletedAccounts,
} from './deleted-accounts';
export { errorHandler, failureMessage, toHttpError } from './error-handler';
export { healthRoutes, type ReadinessCheck, withTimeout } from './health';
export { bodyOf, DEFAULT_BODY_LIMIT, jsonBody } from './json-body';
export { linkNext, PAGING_MESSAGES, type PageQuery, readPageQuery } from './paging';
export { requestId } from './request-id';
export { type RouteRules, routeRules } from './route-rules';
export { serverTiming } from './server-timing';
export { createServiceApp, type ServiceAppOptions } from './service-app';
export {
  noBody,
  type RequestRule,
  requestRuleOf,
  validateBody,
  validateParam,
  validateQuery,
} from './validate';
export { createWindowLimit, type WindowLimit, type WindowLimitOptions } from './window-limit';
export { writeBulkhead, writesInTurn } from './write-turns';
