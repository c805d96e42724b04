import { contractRouter, createServiceApp, type ServiceAppDeps } from '@platform/core';
import { webhookRoutes, type ServiceWebhooks } from '@platform/webhooks';
import type { Express } from 'express';
import type { ConnectorPolicy } from './connectors';
import type { ConnectorsStore } from './connectors.store';
import { pipelinesApiDocument } from './pipelines.openapi';
import { pipelinesRouteDefinitions, type ScheduleLimits } from './pipelines.routes';
import { DEFAULT_MIN_INTERVAL_S } from './schedule';
import type { PipelinesServiceStores } from './pipelines.store';
import { admittedRunsCounter, DEFAULT_WORKSPACE_MAX_ACTIVE_RUNS, runAdmission } from './runs.admission';
import type { RunsProducer } from './runs.queue';

/** `redisReady`: the run producer's Redis (triggers answer 503 without it). */
export interface PipelinesDeps extends ServiceAppDeps<PipelinesServiceStores, ServiceWebhooks> {
  producer: RunsProducer;
  /** Prefix of the Location header's path, e.g. `/pipelines/v3` (the gateway does not rewrite headers). */
  publicBasePath: string;
  /** What connector configs may reach (CONNECTORS_ALLOW_PRIVATE, the platform's databases). */
  connectors: ConnectorPolicy;
  /** POST /connectors/check: the pipelines database through the API's own pool (closed by the caller), and the check's deadline. */
  connectorCheck: { store: ConnectorsStore; timeoutMs?: number };
  /** What schedules accept (PIPELINES_SCHEDULE_MIN_INTERVAL_S); default: the contract's 60 s minimum. */
  schedules?: ScheduleLimits;
  /** PIPELINES_WORKSPACE_MAX_ACTIVE_RUNS (the worker's must be the same); default: the contract's 10. */
  workspaceMaxActiveRuns?: number;
}

export function createApp(deps: PipelinesDeps): Express {
  const { stores } = deps;
  const schedules = deps.schedules ?? { minIntervalS: DEFAULT_MIN_INTERVAL_S };
  const admitted = deps.metrics && admittedRunsCounter(deps.metrics.registry);
  const admission = runAdmission({
    admit: (workspaceId, maxActiveRuns, now) => stores.runs.admit(workspaceId, maxActiveRuns, now),
    promote: async ({ workspaceId, pipelineId }, now) => (await stores.runs.promoteNext(workspaceId, pipelineId, now)) !== null,
    enqueue: (job, priority) => deps.producer.enqueue(job, priority),
    maxActiveRuns: deps.workspaceMaxActiveRuns ?? DEFAULT_WORKSPACE_MAX_ACTIVE_RUNS,
    logger: deps.logger,
    onAdmitted: admitted ? (count) => admitted.inc(count) : undefined,
  });
  const definitions = pipelinesRouteDefinitions({
    pipelines: stores.pipelines,
    runs: { runs: stores.runs, logs: stores.runLogs, pipelines: stores.pipelines, producer: deps.producer, admission, logger: deps.logger },
    runSeries: stores.runSeries,
    publicBasePath: deps.publicBasePath,
    webhooks: webhookRoutes({ store: stores.webhooks, allowPrivate: deps.allowPrivateWebhooks, queue: deps.webhooks?.queue }),
    connectors: deps.connectors,
    connectorCheck: deps.connectorCheck,
    schedules,
  });
  return createServiceApp({
    service: 'pipelines',
    logger: deps.logger,
    internalSecret: deps.internalSecret,
    metrics: deps.metrics,
    routes: contractRouter('pipelines', definitions),
    openapi: pipelinesApiDocument(schedules),
    usage: async (workspaceId) => ({ ...(await stores.pipelines.usage(workspaceId)), ...(await stores.webhooks.usage(workspaceId)) }),
    // Redis down (no triggers) degrades the API without failing readiness (contract section 12).
    ready: { database: stores.ping, redis: deps.redisReady },
  });
}
