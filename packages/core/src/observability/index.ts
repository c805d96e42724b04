export * from './metrics';
export * from './metrics-lint';
export * from './trace-context';
export * from './tracing-config';
