/**
 * The alternative the gateway did not take, for the benchmark only: Express 5 +
 * http-proxy-middleware v4 doing the gateway's proxied-path steps (variant-steps.ts). Run as its
 * own process: `node dist/express-gateway.js` with the gateway's variables and VARIANT_PORT.
 */
import http from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { MAX_BODY_BYTES, readRawBody, SERVICES, temporarilyUnavailable, type ServiceName } from '@platform/core';
import { checkRequest, env, errorBody, onStop, upstreams, type Accepted } from './variant-steps';

const app = express();
app.disable('x-powered-by');
app.disable('etag');

// Authentication, route, version, scope and the rate limit: one middleware, as an Express app would have it.
app.use(async (req: Request, res: Response, next: NextFunction) => {
  // The body is read whole (the signature covers it) and written to the proxied request below.
  // Read whole (the signature covers it), as the gateway does.
  const body = await readRawBody(req, MAX_BODY_BYTES);
  if (!Buffer.isBuffer(body)) return void res.destroy();
  const checked = await checkRequest(req.method, req.originalUrl, req.headers, body);
  res.locals.body = body;
  res.set(checked.headers);
  if (!checked.ok) return void res.status(checked.error.status).type('application/json').send(errorBody(checked.error, checked.headers['x-request-id']));
  res.locals.gateway = checked;
  next();
});

const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });
for (const service of Object.keys(upstreams) as ServiceName[]) {
  app.use(
    SERVICES[service].prefix,
    createProxyMiddleware<Request, Response>({
      target: upstreams[service],
      agent,
      on: {
        proxyReq: (proxyReq, _req, res) => {
          const { upstreamHeaders } = res.locals.gateway as Accepted;
          proxyReq.removeHeader('authorization');
          for (const name of proxyReq.getHeaderNames()) if (name.startsWith('x-platform-')) proxyReq.removeHeader(name);
          for (const name in upstreamHeaders) proxyReq.setHeader(name, upstreamHeaders[name]!);
          const body = res.locals.body as Buffer;
          proxyReq.setHeader('content-length', body.length);
          if (body.length > 0) proxyReq.write(body);
        },
        error: (_err, _req, res) => {
          const out = res as Response;
          if (!out.headersSent && typeof out.status === 'function')
            out.status(503).type('application/json').send(errorBody(temporarilyUnavailable(), undefined));
        },
      },
    }),
  );
}

// /healthz for the launcher, outside the Express app.
const server = http.createServer((req, res) => {
  if (req.url === '/healthz') res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
  else app(req, res);
});
server.keepAliveTimeout = 65_000;
server.listen(Number(env('VARIANT_PORT')), '127.0.0.1');
onStop(() => {
  server.close();
  server.closeIdleConnections();
});
