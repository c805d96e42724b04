import { quotaReached, type QuotaReached, type ServiceQuotaLimits } from '@platform/core';
import type { PipelineStatus } from './generated/prisma/client';
import { nextTick, storedSchedule, type Schedule } from './schedule';

/**
 * What creating, changing, pausing and resuming a pipeline writes of its schedule, and which
 * quotas it is judged by (contract sections 10, 13, 20), as plain functions. The store calls them
 * inside its transaction on what it locked and counted, and writes what they decide.
 */

/** What the workspace holds of the quotas the pipelines table counts. */
interface Usage {
  pipelines: number;
  scheduled_pipelines: number;
}

/** The schedule's times when it is set, or the pipeline resumed, at `now`: ticks count from now; only an active pipeline has a next tick. */
export interface ScheduleTimes {
  scheduleAnchorAt: Date | null;
  nextRunAt: Date | null;
}

export function scheduleTimes(schedule: Schedule | null, status: PipelineStatus, now: Date): ScheduleTimes {
  return { scheduleAnchorAt: schedule ? now : null, nextRunAt: schedule && status === 'active' ? nextTick(schedule, now, now) : null };
}

/** A create counts against `pipelines`, and with a schedule against `scheduled_pipelines` too: the first quota it would pass. */
export function createRefusal(usage: Usage, limits: ServiceQuotaLimits, schedule: Schedule | null): QuotaReached | undefined {
  return (
    quotaReached('pipelines', usage.pipelines, limits.pipelines) ??
    (schedule ? quotaReached('scheduled_pipelines', usage.scheduled_pipelines, limits.scheduled_pipelines) : undefined)
  );
}

/** Whether a change sets a schedule: it may add a scheduled pipeline, so it is made under the workspace's quota lock. */
export function setsSchedule(changes: { schedule?: Schedule | null }): boolean {
  return Boolean(changes.schedule);
}

/**
 * A schedule set on a pipeline that had none counts against `scheduled_pipelines` (`usage` is
 * counted only then); changing or removing a schedule is never refused.
 */
export function addsSchedule(pipeline: { schedule: unknown }, changes: { schedule?: Schedule | null }): boolean {
  return setsSchedule(changes) && pipeline.schedule === null;
}

export function updateRefusal(usage: Usage, limits: ServiceQuotaLimits): QuotaReached | undefined {
  return quotaReached('scheduled_pipelines', usage.scheduled_pipelines, limits.scheduled_pipelines);
}

/**
 * What a pause or resume writes; null when the pipeline already has that status (a no-op). A pause
 * clears the next tick; a resume computes it from `now` (interval: now + n; cron: the next match
 * after now). Either moves the anchor of a schedule to `now`.
 */
export function statusChange(
  pipeline: { status: PipelineStatus; schedule: unknown },
  status: PipelineStatus,
  now: Date,
): ({ status: PipelineStatus } & Partial<ScheduleTimes>) | null {
  if (pipeline.status === status) return null;
  const schedule = storedSchedule(pipeline.schedule);
  return { status, ...(schedule ? scheduleTimes(schedule, status, now) : {}) };
}
