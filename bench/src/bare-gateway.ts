/**
 * The reference design, for the benchmark only: a bare node:http server doing the gateway's
 * proxied-path steps (variant-steps.ts, with one Redis call per request) and forwarding (the body read
 * whole: the signature covers it) through an undici keep-alive pool, with nothing else (no request log, idempotency, body limits, hop-by-hop
 * header filtering). Run as its own process: `node dist/bare-gateway.js` with the gateway's
 * variables and VARIANT_PORT.
 */
import http from 'node:http';
import { MAX_BODY_BYTES, readRawBody, temporarilyUnavailable, type ServiceName } from '@platform/core';
import { Pool, type StreamPool } from './gateway-undici';
import { checkRequest, env, errorBody, onStop, upstreams } from './variant-steps';

const pools = Object.fromEntries(
  (Object.keys(upstreams) as ServiceName[]).map((s) => [s, new Pool(upstreams[s], { connections: 128, keepAliveTimeout: 30_000 })]),
) as Record<ServiceName, StreamPool>;

async function answer(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  if (req.url === '/healthz') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
  // Read whole (the signature covers it), as the gateway does.
  const body = await readRawBody(req, MAX_BODY_BYTES);
  if (!Buffer.isBuffer(body)) return void res.destroy();
  const checked = await checkRequest(req.method!, req.url!, req.headers, body);
  if (!checked.ok)
    return void res
      .writeHead(checked.error.status, { ...checked.headers, 'content-type': 'application/json' })
      .end(errorBody(checked.error, checked.headers['x-request-id']));
  const headers: Record<string, string> = { ...checked.upstreamHeaders };
  if (req.headers['content-type']) headers['content-type'] = req.headers['content-type'];
  try {
    await pools[checked.match.service].stream(
      { method: req.method!, path: checked.match.forwardPath, headers, body: body.length > 0 ? body : null },
      ({ statusCode, headers: upstream }) => {
        res.writeHead(statusCode, { 'content-type': upstream['content-type'] as string, ...checked.headers });
        return res;
      },
    );
  } catch {
    if (!res.headersSent) res.writeHead(503, { 'content-type': 'application/json' }).end(errorBody(temporarilyUnavailable(), checked.headers['x-request-id']));
    else res.destroy();
  }
}

const server = http.createServer((req, res) => void answer(req, res));
server.keepAliveTimeout = 65_000;
server.listen(Number(env('VARIANT_PORT')), '127.0.0.1');
onStop(() => {
  server.close();
  server.closeIdleConnections();
});
