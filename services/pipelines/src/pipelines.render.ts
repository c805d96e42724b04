import { timestamp } from '@platform/core';
import { destinationConnector, renderConnector, sourceConnector } from './connectors';
import type { Pipeline as PipelineRow, Run as RunRow } from './generated/prisma/client';
import type { Pipeline, Run } from './pipelines.resources';
import { renderSchedule, storedSchedule } from './schedule';

/** A pipeline as the API returns it (contract section 10). */
export function renderPipeline(pipeline: PipelineRow): Pipeline {
  return {
    id: pipeline.id,
    name: pipeline.name,
    status: pipeline.status,
    // Configs were parsed by their connector's schema when stored, so each matches its branch.
    source: renderConnector(sourceConnector(pipeline.sourceConnector), pipeline.sourceConfig) as Pipeline['source'],
    destination: renderConnector(destinationConnector(pipeline.destinationConnector), pipeline.destinationConfig) as Pipeline['destination'],
    last_successful_run_at: timestamp(pipeline.lastSuccessfulRunAt),
    schedule: renderSchedule(storedSchedule(pipeline.schedule)),
    next_run_at: timestamp(pipeline.nextRunAt),
    concurrency_policy: pipeline.concurrencyPolicy,
    run_timeout_seconds: pipeline.runTimeoutSeconds,
    created_at: timestamp(pipeline.createdAt),
  };
}

/** A run as the API returns it and as `run.*` webhook events carry it (contract sections 10, 11). */
export function renderRun(run: RunRow): Run {
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
    scheduled_for: timestamp(run.scheduledFor),
    retry_of: run.retryOf,
  };
}
