export * from './observability';
export * from './process';
export * from './servers';
export * from './system';
