export * from './constants';
export * from './contract';
export * from './database';
export * from './logs';
export * from './system';
export * from './tokens';
