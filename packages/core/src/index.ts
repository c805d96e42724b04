// Core by layer; each folder is also a subpath export (`@platform/core/http`, ...), and this barrel is all of them.
// `@platform/core/tracing` stays apart: it starts the SDK and must load before the modules it patches.
export * from './contract';
export * from './data';
export * from './http';
export * from './observability';
export * from './openapi';
export * from './process';
export * from './redis';
