import type { RequestListener, Server } from 'node:http';
import { createServer } from 'node:http';
import type { Logger } from 'pino';

/** Starts an HTTP server for a deployable's app and logs where it listens. */
export function listen(app: RequestListener, port: number, logger: Logger, what: string): Server {
  const server = createServer(app);
  // Longer than the gateway's pool keep-alive, so the gateway, not this side, closes idle sockets
  // (a server closing first races a request the gateway is just sending on that socket).
  server.keepAliveTimeout = 65_000;
  server.listen(port, () => logger.info({ port }, `${what} listening`));
  return server;
}

/** Stops accepting connections and resolves when requests in flight have finished. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
