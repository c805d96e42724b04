import { openApiDocument, type OpenApiDocument } from '@platform/core';
import { WEBHOOK_ENDPOINTS_TAG } from '@platform/webhooks';
import { Run } from './pipelines.resources';
import { pipelinesRouteDeclarationsFor, type ScheduleLimits } from './pipelines.routes';
import { DEFAULT_MIN_INTERVAL_S } from './schedule';

/** The pipelines API's OpenAPI 3.1 document, from the route declarations the app mounts: no database or queue needed. */
export function pipelinesApiDocument(schedules: ScheduleLimits = { minIntervalS: DEFAULT_MIN_INTERVAL_S }): OpenApiDocument {
  return openApiDocument({
    service: 'pipelines',
    title: 'Pipelines API',
    version: '3.0',
    description: 'Pipelines that move records from a source connector to a destination connector, and their runs, executed by workers.',
    routes: pipelinesRouteDeclarationsFor(schedules),
    tags: [
      { name: 'Pipelines', description: 'A source, a destination, an optional schedule, and whether new runs are accepted.' },
      { name: 'Runs', description: 'Runs of a pipeline: `queued` → `running` → `succeeded` | `failed`, or `cancelled`.' },
      { name: 'Connectors', description: 'The connectors a pipeline may use, their config schemas, and a check of a config before a pipeline uses it.' },
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
