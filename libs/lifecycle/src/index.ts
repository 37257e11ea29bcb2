export { HostedServices, inProcessUrl, overTheNetwork, type ServiceReach } from './hosted-services';
export {
  CONNECTIONS_CHECK_INTERVAL_MS,
  createHttpServer,
  HEADERS_TIMEOUT_MS,
  type HttpApp,
  KEEP_ALIVE_TIMEOUT_MS,
  REQUEST_TIMEOUT_MS,
  SERVICE_KEEP_ALIVE_TIMEOUT_MS,
} from './http-server';
export { repeatEvery } from './repeat-every';
export { createRetryWindow, type RetryWindow, retryWithin } from './retry-window';
export { type RunningServer, type RunServerOptions, runServer } from './run-server';
export { fetchThrough, networkFetch, type ServiceFetch } from './service-fetch';
export { inPlace, type StepAside, waitAside } from './waiting-aside';
