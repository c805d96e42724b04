import { startTracing } from '@platform/core/tracing';

// Imported first by main.ts: tracing must start before express, pg, ioredis and undici are loaded.
export const tracing = startTracing({ defaultServiceName: 'platform-warehouse', instrument: ['http', 'express', 'pg', 'ioredis', 'undici'] });
