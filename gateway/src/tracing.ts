import { startTracing } from '@platform/core/tracing';

// Imported first by main.ts: tracing must start before ioredis and pg are loaded. The hot path
// makes its own spans (request-spans.ts): node:http and undici stay unpatched.
export const tracing = startTracing({ defaultServiceName: 'platform-gateway', instrument: ['ioredis', 'pg'] });
