/**
 * The least a node:http + undici proxy can do, for the benchmark only: it forwards the request as
 * it came (the load signs it for the service, as for a direct call) through an undici keep-alive
 * pool and streams the answer back, with no authentication, rate limit, signing or header
 * filtering. What the gateway adds beyond this is the cost of its own steps; what this adds to a
 * direct call is the cost of one more node process on the path. Run as its own process:
 * `node dist/passthrough-gateway.js` with EVENTS_URL and VARIANT_PORT (no database, no Redis).
 */
import http from 'node:http';
import { Pool } from './gateway-undici';

const pool = new Pool(process.env.EVENTS_URL!, { connections: 128, keepAliveTimeout: 30_000 });

async function answer(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  if (req.url === '/healthz') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
  const { host: _host, connection: _connection, ...headers } = req.headers;
  try {
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
