import { startTracing } from '@platform/core/tracing';

// Imported first by worker.ts: tracing must start before pg, ioredis and undici are loaded. Each
// run's span is made by the worker (runs.worker.ts), continuing the trigger's trace.
export const tracing = startTracing({ defaultServiceName: 'platform-pipelines-worker', instrument: ['pg', 'ioredis', 'undici'] });
