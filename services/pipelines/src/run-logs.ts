import { timestamp } from '@platform/core';
import type { Run, RunLog, RunLogLevel } from './generated/prisma/client';
import type { RunLogLine } from './pipelines.resources';

/**
 * Run logs (contract section 14). Every line is written in the transaction of the change it
 * tells (queued, an attempt's start, a step's progress, a retry, a release, the end), so a step
 * that did not commit has no line. Messages are the platform's own words; a failure's message is
 * the run error's, never a driver's.
 */

/** The run error as lines carry it (as the run shows it). */
export interface RunLogError {
  code: string;
  message: string;
}

export interface RunLogEntry {
  attempt: number;
  level: RunLogLevel;
  message: string;
  data: Record<string, unknown> | null;
}

/** Progress lines: one for each of the first PROGRESS_EVERY_STEP steps of an attempt, then thinned out. */
export const PROGRESS_EVERY_STEP = 200;

/**
 * Whether step `step` (1-based) of an attempt writes a progress line. Every step up to
 * PROGRESS_EVERY_STEP (with the default WORKER_BATCH_SIZE of 500 that is every step of the
 * largest sample source); after that every 2nd step up to 2×, every 4th up to 4×, and so on: each
 * doubling of the run adds PROGRESS_EVERY_STEP / 2 lines, so a tiny batch size cannot write a
 * line per record (see maxProgressLines).
 */
export function progressLineDue(step: number): boolean {
  if (step <= PROGRESS_EVERY_STEP) return true;
  const stride = 2 ** Math.ceil(Math.log2(step / PROGRESS_EVERY_STEP));
  return step % stride === 0;
}

/** The most progress lines an attempt of `steps` steps writes: steps up to 200, then 200 + 100 per doubling. */
export function maxProgressLines(steps: number): number {
  if (steps <= PROGRESS_EVERY_STEP) return steps;
  return PROGRESS_EVERY_STEP + (PROGRESS_EVERY_STEP / 2) * Math.ceil(Math.log2(steps / PROGRESS_EVERY_STEP));
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export const runLogLines = {
  queued: (trigger: string): RunLogEntry => ({ attempt: 0, level: 'info', message: `Run queued (trigger: ${trigger}).`, data: { trigger } }),

  /** A pending run's turn came (contract section 19): the runs before it ended. */
  promoted: (): RunLogEntry => ({ attempt: 0, level: 'info', message: 'The runs before this one ended: queued.', data: null }),

  started: (attempt: number, maxAttempts: number): RunLogEntry => ({
    attempt,
    level: 'info',
    message: `Attempt ${attempt} of ${maxAttempts} started.`,
    data: null,
  }),

  progress: (attempt: number, step: number, stats: { recordsRead: number; recordsWritten: number }): RunLogEntry => ({
    attempt,
    level: 'info',
    message: `Step ${step}: ${plural(stats.recordsRead, 'record')} read, ${stats.recordsWritten} written so far.`,
    data: { records_read: stats.recordsRead, records_written: stats.recordsWritten },
  }),

  retry: (attempt: number, error: RunLogError): RunLogEntry => ({
    attempt,
    level: 'warn',
    message: `Attempt ${attempt} failed and will be retried: ${error.message}`,
    data: { error },
  }),

  released: (attempt: number, stats: { recordsRead: number; recordsWritten: number }): RunLogEntry => ({
    attempt,
    level: 'info',
    message: `Attempt ${attempt} was handed back at worker shutdown after ${plural(stats.recordsRead, 'record')}; another worker continues the run.`,
    data: { records_read: stats.recordsRead, records_written: stats.recordsWritten },
  }),

  /** The end of the run, from the run row after its final change. */
  ended: (run: Run): RunLogEntry => {
    const error = run.errorCode === null ? null : { code: run.errorCode, message: run.errorMessage ?? '' };
    const data = { status: run.status, records_read: run.recordsRead, records_written: run.recordsWritten, error };
    switch (run.status) {
      case 'succeeded':
        return {
          attempt: run.attempts,
          level: 'info',
          message: `Run succeeded: ${plural(run.recordsRead, 'record')} read, ${run.recordsWritten} written.`,
          data,
        };
      case 'failed':
        return { attempt: run.attempts, level: 'error', message: `Run failed: ${error?.message ?? 'unknown error'}`, data };
      default:
        return { attempt: run.attempts, level: 'info', message: `Run ${run.status}.`, data };
    }
  },
};

/** A line as the API returns it. */
export function renderRunLog(line: RunLog): RunLogLine {
  return {
    id: line.id,
    run_id: line.runId,
    attempt: line.attempt,
    at: timestamp(line.createdAt),
    level: line.level,
    message: line.message,
    data: (line.data ?? null) as Record<string, unknown> | null,
  };
}
