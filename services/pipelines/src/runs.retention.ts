import { runPeriodically, type Logger } from '@platform/core';
import type { RunsRetentionStore } from './runs.store';

const DAY_MS = 86_400_000;

/** Runs of each pipeline kept whatever their age (contract section 20). */
export const KEPT_LATEST_RUNS = 100;

/** The `table` label of `pipeline_records_pruned_total`. */
export type PrunedRunTable = 'runs' | 'run_logs';

export interface RunRetentionOptions {
  store: RunsRetentionStore;
  /** PIPELINES_RUN_RETENTION_DAYS: runs are kept this long after they end. */
  retentionDays: number;
  /** Runs per DELETE. */
  batchSize: number;
  /** The clock the cut-off is taken from (tests). */
  now?: () => Date;
  /** True once the sweep should end at its next batch (shutdown). */
  stopRequested?: () => boolean;
  onPruned?: (table: PrunedRunTable, count: number) => void;
}

/**
 * Deletes ended runs past their retention that are not among their pipeline's latest runs, with
 * their logs, batch after batch until a batch comes back short. Returns how many runs went.
 */
export async function pruneEndedRuns(options: RunRetentionOptions): Promise<number> {
  const endedBefore = new Date((options.now?.() ?? new Date()).getTime() - options.retentionDays * DAY_MS);
  let total = 0;
  let endedFrom: Date | null = null;
  while (!options.stopRequested?.()) {
    const pruned = await options.store.deleteEndedRuns(endedBefore, KEPT_LATEST_RUNS, options.batchSize, endedFrom);
    total += pruned.runs;
    endedFrom = pruned.lastFinishedAt;
    // Counted batch by batch: a sweep that fails later still shows what it deleted.
    if (pruned.runs > 0) options.onPruned?.('runs', pruned.runs);
    if (pruned.runLogs > 0) options.onPruned?.('run_logs', pruned.runLogs);
    if (pruned.runs < options.batchSize) break;
  }
  return total;
}

/**
 * pruneEndedRuns every `intervalMs` (first after `firstDelayMs`), one sweep at a time; every worker
 * runs one (SKIP LOCKED shares the rows). Failures are logged and retried next time.
 */
export function startRunRetention(options: RunRetentionOptions & { intervalMs: number; firstDelayMs: number; logger: Logger }): { stop(): Promise<void> } {
  const task = runPeriodically(
    async (stop) => {
      const runs = await pruneEndedRuns({ ...options, stopRequested: () => stop.requested });
      if (runs > 0) options.logger.info({ runs }, 'ended runs pruned');
    },
    {
      firstDelayMs: options.firstDelayMs,
      intervalMs: options.intervalMs,
      onError: (err) => options.logger.warn({ err: err instanceof Error ? err.message : err }, 'run retention failed; retrying next period'),
    },
  );
  return { stop: () => task.close() };
}
