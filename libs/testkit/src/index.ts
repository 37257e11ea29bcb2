export * from './constants';
export * from './database';
export * from './logs';
export * from './system';
export * from './tokens';
