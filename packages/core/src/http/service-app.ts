import express, { Router, type Express, type RequestHandler } from 'express';
import type { Logger } from 'pino';
import { compressJson } from './compression';
import type { ServiceName } from '../contract';
import { errorHandler, jsonBody, MAX_BODY_BYTES, notFoundHandler, platformHeaders, requestLog } from './http';
import type { OpenApiDocument } from '../openapi/document';
import { httpMetricsMiddleware, type HttpMetrics } from '../observability/metrics';
import { Readiness, type ReadinessChecks } from './readiness';
import { requireGatewaySignature } from './signed-request';
import { INTERNAL_USAGE_PATH, ServiceUsage } from '../data/quotas';
import type { WorkspaceId } from './http';
import { unauthorized } from './errors';

export interface ServiceAppOptions {
  /** The service's name: its requests are signed with a key derived for it. */
  service: ServiceName;
  logger: Logger;
  /** PLATFORM_INTERNAL_SECRET shared with the gateway. */
  internalSecret: string;
  routes: Router;
  /**
   * What GET /readyz checks: it fails (503) only while the database does not answer; Redis down is
   * shown in its body and in `platform_dependency_up` (on the registry of `metrics`).
   */
  ready: ReadinessChecks;
  /** Request counts and latencies by route pattern and status; none when absent. */
  metrics?: HttpMetrics;
  /** The service's OpenAPI document (openapi.ts), served unsigned at GET /openapi.json for the gateway's /docs. */
  openapi?: OpenApiDocument;
  /**
   * What the workspace holds of each quota the service enforces, answered at INTERNAL_USAGE_PATH to
   * a signed request for that workspace (the gateway's admin quotas); no such route when absent.
   */
  usage?: (workspaceId: WorkspaceId) => Promise<ServiceUsage>;
}

/** What a service's stores give its app besides their queries: readiness asks the database through them. */
export interface ServiceStores {
  /** Resolves when the database answers. */
  ping(): PromiseLike<unknown>;
}

/** A service's webhooks runtime (`startServiceWebhooks` of @platform/webhooks): its outbox relay, delivery worker and retention pruner. */
export interface WebhooksRuntime {
  /** Resolves when Redis answers. */
  ping(): Promise<void>;
  /** Stops the relay and the pruner and lets the deliveries and the delete in flight finish; idempotent. */
  close(): Promise<void>;
}

/**
 * What every service's `createApp` is given (a service may take more): its stores, never the
 * database client, so no handler can run a query a store has not scoped to the workspace.
 * `Webhooks`: the type of the process's webhooks runtime, whose delivery queue the API adds to (a resend).
 */
export interface ServiceAppDeps<Stores extends ServiceStores, Webhooks extends WebhooksRuntime = WebhooksRuntime> {
  stores: Stores;
  logger: Logger;
  /** PLATFORM_INTERNAL_SECRET shared with the gateway. */
  internalSecret: string;
  /** Accept private and loopback webhook targets (tests, local use). */
  allowPrivateWebhooks: boolean;
  /** Resolves when Redis answers; readiness shows it, only the database decides. */
  redisReady: () => PromiseLike<unknown>;
  /** Request counts and latencies by route (GET /metrics); none when absent. */
  metrics?: HttpMetrics;
  /** The process's webhooks runtime; absent where the app runs without one (tests that deliver nothing). */
  webhooks?: Webhooks;
}

export interface JsonApiAppOptions {
  logger: Logger;
  /** Request counts and latencies by route pattern and status; none when absent. */
  metrics?: HttpMetrics;
  /** Answered before `guard` and before any body is read: health and documents, which need no authentication. */
  open?: Router;
  /** Authenticates every request that reaches `routes` (and every unmatched path under `path`), before its body is read. */
  guard: RequestHandler;
  /** Where `guard`, the JSON body and `routes` are mounted; default: everywhere. */
  path?: string;
  routes: Router;
}

/**
 * The Express app every JSON API of the platform shares (each service, the gateway's admin API):
 * platform headers, gzip, request log, metrics, the open endpoints, then the guard, JSON bodies and
 * the routes, then the contract's 404 and the one error middleware, in this order.
 */
export function createJsonApiApp(options: JsonApiAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(platformHeaders());
  app.use(compressJson());
  app.use(requestLog(options.logger));
  if (options.metrics) app.use(httpMetricsMiddleware(options.metrics));
  if (options.open) app.use(options.open);
  app.use(options.path ?? '/', options.guard, jsonBody(), options.routes);
  app.use(notFoundHandler());
  app.use(errorHandler(options.logger));
  return app;
}

/** The Express app every service shares: health, its API document, gateway signature, JSON bodies, the contract's errors. */
export function createServiceApp(options: ServiceAppOptions): Express {
  const open = Router();
  open.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  const readiness = new Readiness(options.ready, { registry: options.metrics?.registry, logger: options.logger });
  open.get('/readyz', async (_req, res) => {
    res.json(await readiness.require());
  });
  const openapi = options.openapi;
  if (openapi) {
    // Unsigned like /healthz: it describes the public API and holds nothing of a workspace.
    open.get('/openapi.json', (_req, res) => {
      res.json(openapi);
    });
  }
  return createJsonApiApp({
    logger: options.logger,
    metrics: options.metrics,
    open,
    guard: requireGatewaySignature(options.internalSecret, options.service, MAX_BODY_BYTES),
    routes: options.usage ? withUsageRoute(options.routes, options.usage) : options.routes,
  });
}

/** The service's routes and, beside them, the internal usage route (behind the same gateway signature). */
function withUsageRoute(routes: Router, usage: NonNullable<ServiceAppOptions['usage']>): Router {
  const router = Router();
  router.get(INTERNAL_USAGE_PATH, async (req, res) => {
    if (!req.identity) throw unauthorized('Request was not signed by the gateway.');
    res.json(ServiceUsage.parse(await usage(req.identity.workspaceId)));
  });
  router.use(routes);
  return router;
}
