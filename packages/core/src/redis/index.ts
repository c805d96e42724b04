export * from './redis';
export * from './redis-config';
export * from './queue-prefix';
