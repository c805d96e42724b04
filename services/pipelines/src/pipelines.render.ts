import { timestamp } from '@platform/core';
import { destinationConnector, renderConnector, sourceConnector } from './connectors';
import type { Pipeline, Run } from './generated/prisma/client';

/** A pipeline as the API returns it (contract section 10). */
export function renderPipeline(pipeline: Pipeline) {
  return {
    id: pipeline.id,
    name: pipeline.name,
    status: pipeline.status,
    source: renderConnector(sourceConnector(pipeline.sourceConnector), pipeline.sourceConfig),
    destination: renderConnector(destinationConnector(pipeline.destinationConnector), pipeline.destinationConfig),
    last_successful_run_at: timestamp(pipeline.lastSuccessfulRunAt),
    created_at: timestamp(pipeline.createdAt),
  };
}

/** A run as the API returns it and as `run.*` webhook events carry it (contract sections 10, 11). */
export function renderRun(run: Run) {
  return {
    id: run.id,
    pipeline_id: run.pipelineId,
    status: run.status,
    trigger: run.trigger,
    since: timestamp(run.since),
    dry_run: run.dryRun,
    attempts: run.attempts,
    stats: { records_read: run.recordsRead, records_written: run.recordsWritten },
    error: run.errorCode === null ? null : { code: run.errorCode, message: run.errorMessage ?? '' },
    created_at: timestamp(run.createdAt),
    started_at: timestamp(run.startedAt),
    finished_at: timestamp(run.finishedAt),
  };
}
export type RenderedRun = ReturnType<typeof renderRun>;
