import { documentationOnly, openApiDocument, SERVICES, type Logger, type OpenApiDocument, type RouteDefinition, type RoutesOf } from '@platform/core';
import { webhookRoutes, type Sql, WEBHOOK_ENDPOINTS_TAG } from '@platform/webhooks';
import type { ConnectorPolicy } from './connectors';
import type { Database } from './database';
import { Run } from './pipelines.resources';
import { pipelinesRouteDefinitions } from './pipelines.routes';
import { pipelinesStore } from './pipelines.store';
import type { RunsProducer } from './runs.queue';
import { runsStore } from './runs.store';

/** Route definitions for documenting only: no database or queue behind them. */
function documentedDefinitions(): Record<RoutesOf<'pipelines'>, RouteDefinition> {
  const db = documentationOnly<Database>('pipelines database');
  const pipelines = pipelinesStore(db);
  return pipelinesRouteDefinitions({
    pipelines,
    runs: { runs: runsStore(db), pipelines, producer: documentationOnly<RunsProducer>('runs queue'), logger: documentationOnly<Logger>('logger') },
    publicBasePath: SERVICES.pipelines.prefix,
    webhooks: webhookRoutes({ sql: documentationOnly<Sql>('webhooks database'), allowPrivate: false }),
    connectors: documentationOnly<ConnectorPolicy>('connector policy'),
  });
}

/** The pipelines API's OpenAPI 3.1 document, from the route definitions the app mounts (default: built without a database). */
export function pipelinesApiDocument(definitions: Record<RoutesOf<'pipelines'>, RouteDefinition> = documentedDefinitions()): OpenApiDocument {
  return openApiDocument({
    service: 'pipelines',
    title: 'Pipelines API',
    version: '3.0',
    description: 'Pipelines that move records from a source connector to a destination connector, and their runs, executed by workers.',
    definitions,
    tags: [
      { name: 'Pipelines', description: 'A source, a destination, and whether new runs are accepted.' },
      { name: 'Runs', description: 'Runs of a pipeline: `queued` → `running` → `succeeded` | `failed`, or `cancelled`.' },
      WEBHOOK_ENDPOINTS_TAG,
    ],
    webhooks: {
      'run.queued': { summary: 'A run was queued', data: Run },
      'run.started': { summary: 'A worker started a run', data: Run },
      'run.succeeded': { summary: 'A run succeeded', data: Run },
      'run.failed': { summary: 'A run failed', data: Run },
      'run.cancelled': { summary: 'A run was cancelled', data: Run },
    },
  });
}
