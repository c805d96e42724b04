import { z } from 'zod';
import { codePointString, contractRouter, decodeCursor, listPage, ListQuery, route, Timestamp, Uuid, type RouteDefinition, type WebhookRouteKey } from '@platform/core';
import type { Router } from 'express';
import { DestinationSpec, SourceSpec } from './connectors';
import { renderPipeline, renderRun } from './pipelines.render';
import { createPipeline, getPipeline, setPipelineStatus } from './pipelines.service';
import type { PipelinesStore } from './pipelines.store';
import { requiredEnum } from './validation';
import { cancelRun, getRun, listRuns, triggerRun, type RunsContext } from './runs.service';

const PipelineParams = z.object({ id: Uuid });
const RunParams = z.object({ id: Uuid, run_id: Uuid });

export const CreatePipelineBody = z.strictObject({
  name: codePointString(1, 200),
  source: SourceSpec,
  destination: DestinationSpec,
});

export const RUN_TRIGGERS = ['manual', 'schedule', 'webhook', 'backfill'] as const;
export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;

export const TriggerRunBody = z.strictObject({
  trigger: requiredEnum(RUN_TRIGGERS),
  // Omitted: since the last succeeded run. null: read everything.
  since: Timestamp.nullable().optional(),
  dry_run: z.boolean().optional(),
});

export const ListRunsQuery = ListQuery.extend({ status: z.enum(RUN_STATUSES).optional() });

export interface PipelinesRoutesDeps {
  pipelines: PipelinesStore;
  runs: RunsContext;
  /** The gateway's public base path of this service, put in front of the Location header's path. */
  publicBasePath: string;
  webhooks: Record<WebhookRouteKey, RouteDefinition>;
}

export function pipelinesRoutes({ pipelines, runs, publicBasePath, webhooks }: PipelinesRoutesDeps): Router {
  return contractRouter('pipelines', {
    ...webhooks,
    'POST /pipelines': route({ body: CreatePipelineBody }, async ({ identity, body }) => {
      const pipeline = await createPipeline(pipelines, identity.workspaceId, {
        name: body.name,
        sourceConnector: body.source.connector,
        sourceConfig: body.source.config,
        destinationConnector: body.destination.connector,
        destinationConfig: body.destination.config,
      });
      return { status: 201, body: renderPipeline(pipeline) };
    }),

    'GET /pipelines/:id': route({ params: PipelineParams }, async ({ identity, params }) => ({
      status: 200,
      body: renderPipeline(await getPipeline(pipelines, identity.workspaceId, params.id)),
    })),

    'POST /pipelines/:id/pause': route({ params: PipelineParams, body: z.strictObject({}) }, async ({ identity, params }) => ({
      status: 200,
      body: renderPipeline(await setPipelineStatus(pipelines, identity.workspaceId, params.id, 'paused')),
    })),

    'POST /pipelines/:id/resume': route({ params: PipelineParams, body: z.strictObject({}) }, async ({ identity, params }) => ({
      status: 200,
      body: renderPipeline(await setPipelineStatus(pipelines, identity.workspaceId, params.id, 'active')),
    })),

    'POST /pipelines/:id/runs': route({ params: PipelineParams, body: TriggerRunBody }, async ({ identity, params, body }) => {
      const run = await triggerRun(runs, identity.workspaceId, params.id, {
        trigger: body.trigger,
        since: body.since,
        dryRun: body.dry_run ?? false,
      });
      return {
        status: 202,
        body: renderRun(run),
        headers: { location: `${publicBasePath}/pipelines/${run.pipelineId}/runs/${run.id}` },
      };
    }),

    'GET /pipelines/:id/runs': route({ params: PipelineParams, query: ListRunsQuery }, async ({ identity, params, query }) => {
      const rows = await listRuns(runs, identity.workspaceId, params.id, {
        status: query.status,
        after: decodeCursor(query.cursor),
        take: query.limit + 1,
      });
      return { status: 200, body: listPage(rows, query.limit, renderRun) };
    }),

    'GET /pipelines/:id/runs/:run_id': route({ params: RunParams }, async ({ identity, params }) => ({
      status: 200,
      body: renderRun(await getRun(runs, identity.workspaceId, params.id, params.run_id)),
    })),

    'POST /pipelines/:id/runs/:run_id/cancel': route({ params: RunParams, body: z.strictObject({}) }, async ({ identity, params }) => ({
      status: 200,
      body: renderRun(await cancelRun(runs, identity.workspaceId, params.id, params.run_id)),
    })),
  });
}
