import { z } from 'zod';
import {
  codePointString,
  invalidRequest,
  ListQuery,
  pageOf,
  quotaExceededDoc,
  resource,
  route,
  type RouteDeclaration,
  type RouteDefinition,
  type RoutesOf,
  SERVICES,
  Timestamp,
  Uuid,
  type WebhookRouteKey,
} from '@platform/core';
import { webhookRouteDeclarations } from '@platform/webhooks';
import { DestinationSpec, DocumentedDestinationSpec, DocumentedSourceSpec, SourceSpec, verifyConnectors, type ConnectorPolicy } from './connectors';
import { renderPipeline, renderRun } from './pipelines.render';
import {
  ConcurrencyPolicyDoc,
  EXAMPLE_IDS,
  MAX_PENDING_RUNS,
  Pipeline,
  PipelineList,
  Run,
  RUN_STATUSES,
  RUN_TRIGGERS,
  RunList,
  RunLogList,
  RunTimeoutSecondsDoc,
} from './pipelines.resources';
import { renderRunLog } from './run-logs';
import { connectorRouteDeclarations, connectorRouteDefinitions } from './connectors.routes';
import type { ConnectorsStore } from './connectors.store';
import { createPipeline, getPipeline, listPipelines, setPipelineStatus, updatePipeline } from './pipelines.service';
import type { PipelinesStore } from './pipelines.store';
import type { Run as RunRow } from './runs.store';
import { requiredEnum } from './validation';
import { cancelRun, getRun, listRunLogs, listRuns, retryRun, startPendingRuns, triggerRun, type RunsContext } from './runs.service';
import { runSeriesRouteDeclarations, runSeriesRouteDefinitions } from './runs.series';
import type { RunSeriesStore } from './runs.series.store';
import { DEFAULT_MIN_INTERVAL_S, scheduleSchema } from './schedule';

const PipelineParams = z.object({ id: Uuid });
const RunParams = z.object({ id: Uuid, run_id: Uuid });

/** What the schedules accept: the smallest interval is configuration (PIPELINES_SCHEDULE_MIN_INTERVAL_S). */
export interface ScheduleLimits {
  minIntervalS: number;
}

const SCHEDULE_DESCRIPTION =
  'null: runs only when triggered (the default). Invalid: `schedule.type` `invalid_enum`, `schedule.cron` `invalid_format`, `schedule.timezone` `invalid_format`, ' +
  '`schedule.every_seconds` `too_small` / `too_big` / `invalid_type`.';

function pipelineBodies({ minIntervalS }: ScheduleLimits) {
  const schedule = scheduleSchema(minIntervalS).optional().meta({ description: SCHEDULE_DESCRIPTION });
  // Contract section 19: both may be set on create and changed by PATCH.
  const steering = { concurrency_policy: ConcurrencyPolicyDoc.optional(), run_timeout_seconds: RunTimeoutSecondsDoc.optional() };
  const create = z.strictObject({ name: codePointString(1, 200), source: SourceSpec, destination: DestinationSpec, schedule, ...steering });
  const update = z.strictObject({ name: codePointString(1, 200).optional(), schedule, ...steering });
  return {
    create,
    update,
    /** The create body as the reference shows it: each connector with its own config schema. */
    documentedCreate: create.extend({ source: DocumentedSourceSpec, destination: DocumentedDestinationSpec }),
  };
}

export const TriggerRunBody = z.strictObject({
  trigger: requiredEnum(RUN_TRIGGERS),
  // Omitted: since the last succeeded run. null: read everything.
  since: Timestamp.nullable().optional().meta({ description: 'Read only records updated after it. Omitted: since the last succeeded run; null: everything.' }),
  dry_run: z.boolean().optional().meta({ description: 'Read and validate but write nothing (default false).' }),
});

export const ListRunsQuery = ListQuery.extend({ status: z.enum(RUN_STATUSES).optional().meta({ description: 'Only runs in this status.' }) });
export const ListPipelinesQuery = ListQuery.extend({ status: z.enum(['active', 'paused']).optional().meta({ description: 'Only pipelines in this status.' }) });

export interface PipelinesRoutesDeps {
  pipelines: PipelinesStore;
  runs: RunsContext;
  /** GET /pipelines/{id}/stats/series. */
  runSeries: RunSeriesStore;
  /** The gateway's public base path of this service, put in front of the Location header's path. */
  publicBasePath: string;
  webhooks: Record<WebhookRouteKey, RouteDefinition>;
  /** Addresses and platform databases a connector config may not reach (checked again when a run connects). */
  connectors: ConnectorPolicy;
  /** POST /connectors/check: the pipelines database through the API's own pool, and the check's deadline (8 s unless a test shortens it). */
  connectorCheck: { store: ConnectorsStore; timeoutMs?: number };
  schedules: ScheduleLimits;
}

const NoBody = z.strictObject({});

/** The 202 of a trigger or a retry: the run created, and where it lives. */
const runAccepted = {
  description: 'The run: `queued`, or `pending` behind the active run (`concurrency_policy: "enqueue"`).',
  schema: Run,
  headers: {
    Location: {
      description: "The run's URL path.",
      schema: z.string().meta({ examples: [`${SERVICES.pipelines.prefix}/pipelines/${EXAMPLE_IDS.pipeline}/runs/${EXAMPLE_IDS.run}`] }),
    },
  },
};

/** Why a trigger or a retry creates no run. */
const runCreationErrors = {
  400: 'The pipeline is paused (`errors[0] = { field: "", code: "pipeline_paused" }`).',
  409: {
    description:
      'A run of the pipeline is already `queued` or `running` and its `concurrency_policy` is `reject`: `active_run_id` names it. ' +
      `With \`enqueue\`: the pipeline already has ${MAX_PENDING_RUNS} pending runs (\`errors[0] = { field: "", code: "too_many_pending" }\`).`,
    example: { code: 'conflict', message: 'A run of this pipeline is already active.', active_run_id: EXAMPLE_IDS.run },
  },
};

const pipeline = resource({ name: 'pipeline', params: PipelineParams, schema: Pipeline });
const run = resource({
  name: 'run',
  params: RunParams,
  schema: Run,
  notFound: 'No such pipeline, or no run with this id of it, in the workspace.',
  tag: 'Runs',
});

/**
 * What each route of the pipelines service takes and answers (no handlers), for the configured
 * schedule limits: the definitions below validate it, the OpenAPI document describes it.
 */
export function pipelinesRouteDeclarationsFor(limits: ScheduleLimits) {
  const bodies = pipelineBodies(limits);
  return {
    ...webhookRouteDeclarations,
    ...connectorRouteDeclarations,
    ...runSeriesRouteDeclarations,
    'POST /pipelines': {
      body: bodies.create,
      docs: {
        operationId: 'createPipeline',
        summary: 'Create a pipeline',
        description:
          'Unknown connectors are `invalid_enum` on `source.connector` or `destination.connector`; unknown config fields are `unknown_field`. A URL or `connection_url` whose host is not a public address is `private_address` (unless the platform runs with `CONNECTORS_ALLOW_PRIVATE=true`); a `connection_url` with a parameter other than `sslmode` is `invalid_format`, one naming a database of the platform `platform_database`.',
        body: bodies.documentedCreate,
        responses: { 201: { description: 'The pipeline, `active`; with a schedule, `next_run_at` is its first tick.', schema: Pipeline } },
        errors: {
          409: quotaExceededDoc(
            'The workspace already has as many pipelines as its `pipelines` quota allows (`errors[0] = { field: "", code: "quota_exceeded" }`), or the pipeline has a ' +
              '`schedule` and the workspace already has as many pipelines with a schedule, paused or not, as its `scheduled_pipelines` quota allows ' +
              '(`errors[0] = { field: "schedule", code: "quota_exceeded" }`). `error.quota` names the quota and `error.limit` gives its value; nothing was created.',
            'pipelines',
          ),
        },
        requestExample: {
          name: 'Sample to warehouse table',
          source: { connector: 'sample', config: { records: 100 } },
          destination: { connector: 'postgres', config: { table: 'sample_records' } },
          schedule: { type: 'cron', cron: '0 3 * * *', timezone: 'Europe/Berlin' },
        },
      },
    },
    'GET /pipelines': {
      query: ListPipelinesQuery,
      docs: {
        operationId: 'listPipelines',
        summary: "List the workspace's pipelines",
        responses: { 200: { description: 'One page of pipelines, oldest first.', schema: PipelineList } },
      },
    },
    'GET /pipelines/:id': pipeline.retrieve(),
    'PATCH /pipelines/:id': pipeline.route({
      body: bodies.update,
      docs: {
        operationId: 'updatePipeline',
        summary: 'Rename a pipeline or set its schedule',
        description:
          'Fields left out stay as they are; `schedule: null` removes the schedule. Setting a schedule (even the same one) counts its ticks from now: ' +
          '`next_run_at` becomes the first tick after now (null while the pipeline is paused).',
        responses: { 200: { description: 'The pipeline.', schema: Pipeline } },
        errors: {
          409: quotaExceededDoc(
            'A `schedule` set on a pipeline that had none while the workspace already has as many pipelines with a schedule, paused or not, as its ' +
              '`scheduled_pipelines` quota allows (`errors[0] = { field: "schedule", code: "quota_exceeded" }`, `error.quota`, `error.limit`); nothing changed. ' +
              'Changing or removing an existing schedule is never refused.',
            'scheduled_pipelines',
            'schedule',
          ),
        },
        requestExample: { schedule: { type: 'interval', every_seconds: 3600 } },
      },
    }),
    'POST /pipelines/:id/pause': pipeline.route({
      body: NoBody,
      docs: {
        operationId: 'pausePipeline',
        summary: 'Pause a pipeline',
        description: 'A paused pipeline refuses new runs and has no schedule ticks (`next_run_at: null`); pausing a paused pipeline changes nothing.',
        responses: { 200: { description: 'The pipeline, `paused`.', schema: Pipeline } },
      },
    }),
    'POST /pipelines/:id/resume': pipeline.route({
      body: NoBody,
      docs: {
        operationId: 'resumePipeline',
        summary: 'Resume a pipeline',
        description:
          "Resuming an active pipeline changes nothing. A schedule's next tick is computed from the resume time (interval: resume time + `every_seconds`; cron: the next match after it).",
        responses: { 200: { description: 'The pipeline, `active`.', schema: Pipeline } },
      },
    }),
    'POST /pipelines/:id/runs': pipeline.route({
      body: TriggerRunBody,
      docs: {
        operationId: 'triggerRun',
        summary: 'Trigger a run',
        tag: 'Runs',
        description:
          'Queues a run; a worker executes it (at most 3 attempts). One run per pipeline may be active, enforced by the database: under concurrent triggers exactly one gets 202 ' +
          'with `concurrency_policy: "reject"`; with `"enqueue"` the others get 202 with a `pending` run that starts once the runs before it ended, in trigger order. ' +
          'Counts in its own rate-limit bucket. Emits `run.queued` (for a pending run too), then `run.started` and `run.succeeded`, `run.failed` or `run.cancelled`.',
        responses: { 202: runAccepted },
        errors: runCreationErrors,
        requestExample: { trigger: 'manual', dry_run: false },
      },
    }),
    'GET /pipelines/:id/runs': pipeline.route({
      query: ListRunsQuery,
      docs: {
        operationId: 'listRuns',
        summary: "List a pipeline's runs",
        tag: 'Runs',
        responses: { 200: { description: 'One page of runs, oldest first.', schema: RunList } },
      },
    }),
    'GET /pipelines/:id/runs/:run_id': run.retrieve(),
    'POST /pipelines/:id/runs/:run_id/cancel': run.route({
      body: NoBody,
      docs: {
        operationId: 'cancelRun',
        summary: 'Cancel a run',
        description: 'Cancels a `pending`, `queued` or `running` run; a running one stops after its current batch. Emits `run.cancelled`.',
        responses: { 200: { description: 'The run, `cancelled`.', schema: Run } },
        errors: {
          409: {
            description: 'The run has already ended; `run_status` says how.',
            example: { code: 'conflict', message: 'The run has already ended (succeeded).', run_status: 'succeeded' },
          },
        },
      },
    }),
    'POST /pipelines/:id/runs/:run_id/retry': run.route({
      body: NoBody,
      docs: {
        operationId: 'retryRun',
        summary: 'Retry a run',
        description:
          'Creates a new run with the `trigger`, `since` and `dry_run` of a `failed` or `cancelled` run, and `retry_of` naming it, as a trigger creates a run: ' +
          'the same rules hold (a paused pipeline, an active run, the concurrency policy) and it counts in the same rate-limit bucket. Emits `run.queued`.',
        responses: { 202: runAccepted },
        errors: {
          ...runCreationErrors,
          409: {
            description:
              'The run is neither `failed` nor `cancelled` (`errors[0] = { in: "path", field: "run_id", code: "not_retryable" }`, `run_status` says what it is); ' +
              `or, as for a trigger, a run is active (\`active_run_id\`) or ${MAX_PENDING_RUNS} runs are already pending (\`too_many_pending\`).`,
            example: {
              code: 'conflict',
              message: 'Only a failed or cancelled run can be retried; this one is succeeded.',
              run_status: 'succeeded',
              errors: [{ in: 'path', field: 'run_id', code: 'not_retryable', message: 'the run is succeeded; only failed or cancelled runs can be retried' }],
            },
          },
        },
      },
    }),
    'GET /pipelines/:id/runs/:run_id/logs': run.route({
      query: ListQuery,
      docs: {
        operationId: 'listRunLogs',
        summary: "List a run's log lines",
        tag: 'Runs',
        description:
          "Oldest first. Each line is written in the same transaction as the change it tells: queued (`attempt` 0, `data: { trigger }`), each attempt's start, " +
          'progress after a step (`data: { records_read, records_written }` so far), a retry with its error (`warn`, `data: { error }`), a hand-back at worker shutdown, ' +
          'and the end (`data: { status, records_read, records_written, error }`; `error` level when the run failed). ' +
          'Progress is logged per step, not per record: every step of an attempt up to the 200th, then every 2nd step up to the 400th, every 4th up to the 800th, and so on ' +
          '(each doubling of the run adds at most 100 lines).',
        responses: { 200: { description: 'One page of log lines, oldest first.', schema: RunLogList } },
      },
    }),
  } satisfies Record<RoutesOf<'pipelines'>, RouteDeclaration>;
}

/** The declarations with the default schedule limits (PIPELINES_SCHEDULE_MIN_INTERVAL_S unset). */
export const pipelinesRouteDeclarations = pipelinesRouteDeclarationsFor({ minIntervalS: DEFAULT_MIN_INTERVAL_S });

/** The pipelines service's route declarations wired to handlers with the stores and queue; handlers call the services. */
export function pipelinesRouteDefinitions({
  pipelines,
  runs,
  runSeries,
  publicBasePath,
  webhooks,
  connectors,
  connectorCheck,
  schedules,
}: PipelinesRoutesDeps): Record<RoutesOf<'pipelines'>, RouteDefinition> {
  const pipelinesRouteDeclarations = pipelinesRouteDeclarationsFor(schedules);
  const runAcceptedAnswer = (run: RunRow) => ({
    status: 202,
    body: renderRun(run),
    headers: { location: `${publicBasePath}/pipelines/${run.pipelineId}/runs/${run.id}` },
  });
  return {
    ...webhooks,
    ...connectorRouteDefinitions({ policy: connectors, ...connectorCheck }),
    ...runSeriesRouteDefinitions({ pipelines, series: runSeries }),
    'POST /pipelines': route(pipelinesRouteDeclarations['POST /pipelines'], async ({ identity, body }) => {
      const refused = await verifyConnectors(body, connectors);
      if (refused.length > 0) throw invalidRequest(refused);
      const pipeline = await createPipeline(
        pipelines,
        identity.workspaceId,
        {
          name: body.name,
          sourceConnector: body.source.connector,
          sourceConfig: body.source.config,
          destinationConnector: body.destination.connector,
          destinationConfig: body.destination.config,
          schedule: body.schedule,
          concurrencyPolicy: body.concurrency_policy,
          runTimeoutSeconds: body.run_timeout_seconds,
        },
        identity.quotas,
      );
      return { status: 201, body: renderPipeline(pipeline) };
    }),

    'GET /pipelines': route(pipelinesRouteDeclarations['GET /pipelines'], async ({ identity, query }) => ({
      status: 200,
      body: await pageOf(query, (page) => listPipelines(pipelines, identity.workspaceId, { status: query.status, ...page }), renderPipeline),
    })),

    'PATCH /pipelines/:id': route(pipelinesRouteDeclarations['PATCH /pipelines/:id'], async ({ identity, params, body }) => ({
      status: 200,
      body: renderPipeline(
        await updatePipeline(
          pipelines,
          identity.workspaceId,
          params.id,
          { name: body.name, schedule: body.schedule, concurrencyPolicy: body.concurrency_policy, runTimeoutSeconds: body.run_timeout_seconds },
          identity.quotas,
        ),
      ),
    })),

    'GET /pipelines/:id': route(pipelinesRouteDeclarations['GET /pipelines/:id'], async ({ identity, params }) => ({
      status: 200,
      body: renderPipeline(await getPipeline(pipelines, identity.workspaceId, params.id)),
    })),

    'POST /pipelines/:id/pause': route(pipelinesRouteDeclarations['POST /pipelines/:id/pause'], async ({ identity, params }) => ({
      status: 200,
      body: renderPipeline(await setPipelineStatus(pipelines, identity.workspaceId, params.id, 'paused')),
    })),

    'POST /pipelines/:id/resume': route(pipelinesRouteDeclarations['POST /pipelines/:id/resume'], async ({ identity, params }) => {
      const pipeline = await setPipelineStatus(pipelines, identity.workspaceId, params.id, 'active');
      // Contract section 19: a paused pipeline's pending runs start once it is resumed.
      await startPendingRuns(runs, identity.workspaceId, pipeline.id);
      return { status: 200, body: renderPipeline(pipeline) };
    }),

    'POST /pipelines/:id/runs': route(pipelinesRouteDeclarations['POST /pipelines/:id/runs'], async ({ identity, params, body }) => {
      const run = await triggerRun(runs, identity.workspaceId, params.id, {
        trigger: body.trigger,
        since: body.since,
        dryRun: body.dry_run ?? false,
      });
      return runAcceptedAnswer(run);
    }),

    'POST /pipelines/:id/runs/:run_id/retry': route(pipelinesRouteDeclarations['POST /pipelines/:id/runs/:run_id/retry'], async ({ identity, params }) =>
      runAcceptedAnswer(await retryRun(runs, identity.workspaceId, params.id, params.run_id)),
    ),

    'GET /pipelines/:id/runs': route(pipelinesRouteDeclarations['GET /pipelines/:id/runs'], async ({ identity, params, query }) => {
      return {
        status: 200,
        body: await pageOf(query, (page) => listRuns(runs, identity.workspaceId, params.id, { status: query.status, ...page }), renderRun),
      };
    }),

    'GET /pipelines/:id/runs/:run_id': route(pipelinesRouteDeclarations['GET /pipelines/:id/runs/:run_id'], async ({ identity, params }) => ({
      status: 200,
      body: renderRun(await getRun(runs, identity.workspaceId, params.id, params.run_id)),
    })),

    'POST /pipelines/:id/runs/:run_id/cancel': route(pipelinesRouteDeclarations['POST /pipelines/:id/runs/:run_id/cancel'], async ({ identity, params }) => ({
      status: 200,
      body: renderRun(await cancelRun(runs, identity.workspaceId, params.id, params.run_id)),
    })),

    'GET /pipelines/:id/runs/:run_id/logs': route(pipelinesRouteDeclarations['GET /pipelines/:id/runs/:run_id/logs'], async ({ identity, params, query }) => ({
      status: 200,
      body: await pageOf(query, (page) => listRunLogs(runs, identity.workspaceId, params.id, params.run_id, page), renderRunLog),
    })),
  };
}
