export * from './config';
export * from './run-process';
export * from './shutdown';
export * from './periodic';
export * from './logger';
