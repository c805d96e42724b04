import { z } from 'zod';
import {
  resource,
  route,
  seriesFrame,
  SeriesQuery,
  seriesOf,
  timestamp,
  Uuid,
  type RouteDeclaration,
  type RouteDefinition,
  type SeriesWindow,
} from '@platform/core';
import { EXAMPLE_IDS, Pipeline, RUN_STATUSES } from './pipelines.resources';
import { getPipeline } from './pipelines.service';
import type { PipelinesStore } from './pipelines.store';
import type { RunBucketRow, RunSeriesStore } from './runs.series.store';

/**
 * A pipeline's runs over time (decision 0016): per bucket, how many of the runs triggered in it are
 * in each status now. Buckets go by `created_at`, not by when runs ended: every run counts once,
 * active ones too, and a bucket's total is the triggers it received, whatever became of them.
 */

type RunStatus = (typeof RUN_STATUSES)[number];

const statusCounts = Object.fromEntries(
  RUN_STATUSES.map((status) => [
    status,
    z
      .int()
      .min(0)
      .meta({ description: `Runs triggered in the bucket that are \`${status}\` now.` }),
  ]),
) as Record<RunStatus, z.ZodInt>;

const zeros = (): Record<RunStatus, number> => Object.fromEntries(RUN_STATUSES.map((status) => [status, 0])) as Record<RunStatus, number>;

export const RunSeries = seriesOf(
  'RunSeries',
  "A pipeline's runs per bucket of their `created_at` (when the trigger arrived), by the status each run is in now.",
  { pipeline_id: Uuid },
  statusCounts,
  {
    pipeline_id: EXAMPLE_IDS.pipeline,
    interval: 'hour',
    from: '2024-12-01T08:00:00.000Z',
    to: '2024-12-01T10:00:00.000Z',
    buckets: [
      { start: '2024-12-01T08:00:00.000Z', ...zeros(), succeeded: 11, failed: 1 },
      { start: '2024-12-01T09:00:00.000Z', ...zeros(), running: 1, succeeded: 10 },
    ],
  },
);
export type RunSeries = z.infer<typeof RunSeries>;

/** The store's rows (one per bucket and status, in order) as buckets with every status counted. */
export function renderRunSeries(pipelineId: string, window: SeriesWindow, rows: RunBucketRow[]): RunSeries {
  const buckets: RunSeries['buckets'] = [];
  for (const row of rows) {
    const start = timestamp(row.start);
    let bucket = buckets[buckets.length - 1];
    if (bucket?.start !== start) buckets.push((bucket = { start, ...zeros() }));
    if (row.status !== null && row.status in bucket) bucket[row.status as RunStatus] = row.count;
  }
  return { pipeline_id: pipelineId, ...seriesFrame(window), buckets };
}

const pipeline = resource({ name: 'pipeline', params: z.object({ id: Uuid }), schema: Pipeline });

export const runSeriesRouteDeclarations = {
  'GET /pipelines/:id/stats/series': pipeline.route({
    query: SeriesQuery,
    docs: {
      operationId: 'getRunSeries',
      summary: 'Runs over time',
      tag: 'Runs',
      description:
        "Runs per hour or day by status, counted by each run's `created_at` (when its trigger arrived), each in the status it is in now: " +
        "a bucket's total never changes once it is past, and its statuses settle as its runs end. Every bucket of the range is present, " +
        'zeros included, so a chart needs no gap filling. Runs older than the run retention are no longer counted.',
      responses: { 200: { description: 'The series.', schema: RunSeries } },
    },
  }),
} satisfies Record<string, RouteDeclaration>;

/** The runs series route wired to the stores. */
export function runSeriesRouteDefinitions(deps: {
  pipelines: PipelinesStore;
  series: RunSeriesStore;
}): Record<'GET /pipelines/:id/stats/series', RouteDefinition> {
  return {
    'GET /pipelines/:id/stats/series': route(runSeriesRouteDeclarations['GET /pipelines/:id/stats/series'], async ({ identity, params, query }) => {
      await getPipeline(deps.pipelines, identity.workspaceId, params.id);
      return { status: 200, body: renderRunSeries(params.id, query, await deps.series.series(identity.workspaceId, params.id, query)) };
    }),
  };
}
