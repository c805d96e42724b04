import express, { type Express, type Router } from 'express';
import type { Logger } from 'pino';
import { temporarilyUnavailable } from './errors';
import { errorHandler, jsonBody, notFoundHandler, platformHeaders, requestLog } from './http';
import { requireGatewaySignature } from './route';

export interface ServiceAppOptions {
  logger: Logger;
  /** PLATFORM_INTERNAL_SECRET shared with the gateway. */
  internalSecret: string;
  routes: Router;
  /** Resolves when the service's database and Redis answer. */
  ready: () => Promise<void>;
}

/** The Express app every service shares: health, gateway signature, JSON bodies, the contract's errors. */
export function createServiceApp(options: ServiceAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(platformHeaders());
  app.use(requestLog(options.logger));
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    try {
      await options.ready();
      res.json({ status: 'ready' });
    } catch (err) {
      options.logger.warn({ err }, 'not ready');
      throw temporarilyUnavailable('Not ready: a backend is unreachable.');
    }
  });
  app.use(requireGatewaySignature(options.internalSecret));
  app.use(jsonBody());
  app.use(options.routes);
  app.use(notFoundHandler());
  app.use(errorHandler(options.logger));
  return app;
}
