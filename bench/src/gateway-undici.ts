/** The very undici the gateway runs (its dependency, not a second copy in bench/), for the comparison proxies. */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type { Writable } from 'node:stream';

export interface StreamPool {
  stream(
    options: { method: string; path: string; headers: IncomingHttpHeaders; body: IncomingMessage | Buffer | null },
    factory: (data: { statusCode: number; headers: IncomingHttpHeaders }) => Writable,
  ): Promise<unknown>;
}

export const { Pool } = createRequire(require.resolve('@platform/gateway/package.json'))('undici') as {
  Pool: new (origin: string, options: { connections: number; keepAliveTimeout: number }) => StreamPool;
};
