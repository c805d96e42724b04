/**
 * The least a node:http + undici proxy can do, for the benchmark only: it forwards the request as
 * it came (the load signs it for the service, as for a direct call) through an undici keep-alive
 * pool and streams the answer back, with no authentication, rate limit, signing or header
 * filtering. What the gateway adds beyond this is the cost of its own steps; what this adds to a
 * direct call is the cost of one more node process on the path. Run as its own process:
 * `node dist/passthrough-gateway.js` with EVENTS_URL and VARIANT_PORT (no database, no Redis).
 *
 * With VARIANT_REDIS_CALL=1 (and REDIS_URL) it makes, before forwarding, the one call of the
 * gateway's exact limiter (`RedisSlidingWindow`: the same Lua script on the same kind of ioredis
 * connection) and nothing else: the floor of any proxy that asks a shared count in Redis before
 * each request, which is what contract section 6's limit needs.
 */
import http from 'node:http';
import { createLogger } from '@platform/core';
import { RedisSlidingWindow, type Limiter } from '@platform/gateway/dist/rate-limiter';
import { createRedis, DEFAULT_REDIS_PREFIX } from '@platform/gateway/dist/redis';
import { Pool } from './gateway-undici';

const pool = new Pool(process.env.EVENTS_URL!, { connections: 128, keepAliveTimeout: 30_000 });
const limiter: Limiter | undefined =
  process.env.VARIANT_REDIS_CALL === '1'
    ? new RedisSlidingWindow(createRedis(process.env.REDIS_URL!, createLogger('bench-passthrough', 'warn'), 'bench-passthrough'), `${DEFAULT_REDIS_PREFIX}rl:`)
    : undefined;
/** Far above what a bench run sends: every call is counted and accepted. */
const FLOOR_LIMIT = 100_000_000;

async function answer(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  if (req.url === '/healthz') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
  const { host: _host, connection: _connection, ...headers } = req.headers;
  try {
    if (limiter) await limiter.hit('passthrough-floor', FLOOR_LIMIT);
    await pool.stream(
      { method: req.method!, path: req.url!, headers, body: req.headers['content-length'] ? req : null },
      ({ statusCode, headers: upstream }) => {
        res.writeHead(statusCode, { 'content-type': upstream['content-type'] as string });
        return res;
      },
    );
  } catch {
    if (!res.headersSent) res.writeHead(503).end();
    else res.destroy();
  }
}

const server = http.createServer((req, res) => void answer(req, res));
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.VARIANT_PORT), '127.0.0.1');
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    server.close();
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), 1_000).unref();
  });
}
