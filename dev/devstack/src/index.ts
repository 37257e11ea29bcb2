export * from './balancer';
export * from './bucket';
export * from './observability';
export * from './postgres';
export * from './process';
export * from './servers';
export * from './system';
