import { createServiceApp, type Logger } from '@platform/core';
import { webhookRoutes } from '@platform/webhooks';
import type { Express } from 'express';
import type { Database } from './database';
import { pipelinesRoutes } from './pipelines.routes';
import { pipelinesStore } from './pipelines.store';
import type { RunsProducer } from './runs.queue';
import { runsStore } from './runs.store';

export interface PipelinesDeps {
  db: Database;
  producer: RunsProducer;
  logger: Logger;
  internalSecret: string;
  /** Prefix of the Location header's path, e.g. `/pipelines/v3` (the gateway does not rewrite headers). */
  publicBasePath: string;
  /** Accept private and loopback webhook targets (tests, local use). */
  allowPrivateWebhooks: boolean;
}

export function createApp(deps: PipelinesDeps): Express {
  const pipelines = pipelinesStore(deps.db);
  return createServiceApp({
    logger: deps.logger,
    internalSecret: deps.internalSecret,
    routes: pipelinesRoutes({
      pipelines,
      runs: { runs: runsStore(deps.db), pipelines, producer: deps.producer, logger: deps.logger },
      publicBasePath: deps.publicBasePath,
      webhooks: webhookRoutes({ sql: deps.db, allowPrivate: deps.allowPrivateWebhooks }),
    }),
    ready: async () => {
      await deps.db.$queryRaw`SELECT 1`;
      await deps.producer.ping();
    },
  });
}
