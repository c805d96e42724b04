import http, { type RequestListener, type Server } from 'node:http';
import { answerClientErrors } from '@platform/core';

export interface GatewayServerOptions {
  /** A client whose request headers are not complete within this gets 408 (slowloris). */
  headersTimeoutMs: number;
  /** A client whose whole request (headers and body) is not received within this gets 408. */
  requestTimeoutMs: number;
}

/**
 * The gateway's HTTP server. Slow clients get 408 with the contract's error body once their
 * headers or whole request take too long; node checks at connectionsCheckingInterval (default
 * 30 s), so check often enough for the limits to mean what they say. Idle keep-alive connections
 * are not affected (the header timer starts with a request's first byte). `Expect: 100-continue`
 * goes to the same handler, which acknowledges it only after its checks (token, route, version,
 * scope, rate limit, declared size).
 */
export function createGatewayServer(app: RequestListener, options: GatewayServerOptions): Server {
  const server = http.createServer(
    {
      headersTimeout: Math.min(options.headersTimeoutMs, options.requestTimeoutMs),
      requestTimeout: options.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1_000, options.headersTimeoutMs),
    },
    app,
  );
  server.on('checkContinue', app);
  answerClientErrors(server);
  // Longer than a load balancer's idle timeout (60 s is common), so the balancer closes idle connections first.
  server.keepAliveTimeout = 65_000;
  return server;
}
