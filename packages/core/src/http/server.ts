import type { RequestListener, Server } from 'node:http';
import { createServer } from 'node:http';
import type { Logger } from 'pino';
import { answerClientErrors } from './client-errors';
import { DEFAULT_HOST } from '../process/config';

/** Starts an HTTP server for a deployable's app on `host` (HOST; default this machine only) and logs where it listens. */
export function listen(app: RequestListener, port: number, logger: Logger, what: string, host: string = DEFAULT_HOST): Server {
  const server = createServer(app);
  // Longer than the gateway's pool keep-alive, so the gateway, not this side, closes idle sockets
  // (a server closing first races a request the gateway is just sending on that socket).
  server.keepAliveTimeout = 65_000;
  answerClientErrors(server);
  server.listen(port, host, () => logger.info(listeningAt(server, port), `${what} listening`));
  return server;
}

/** The address and port a listening server is bound to, for its log line. */
export function listeningAt(server: Server, port: number): { host?: string; port: number } {
  const address = server.address();
  return typeof address === 'object' && address ? { host: address.address, port: address.port } : { port };
}

/** How often a closing server looks for connections whose last answer went out. */
const IDLE_SWEEP_MS = 25;

/**
 * Stops accepting connections and resolves when the requests in flight have been answered and
 * every connection is closed. Keep-alive connections would otherwise hold the close open until
 * their idle timeout (65 s, past any shutdown deadline): an answer given from now on says
 * `Connection: close`, and a connection is closed as soon as its answer in flight is out.
 */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.prependListener('request', (_req, res) => {
      res.shouldKeepAlive = false;
    });
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    server.close(() => {
      clearInterval(sweep);
      resolve();
    });
    server.closeIdleConnections();
  });
}
