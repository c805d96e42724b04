import { registeredCounter, runPeriodically, type Logger, type Registry } from '@platform/core';
import type { ScansRetentionStore } from './scans-retention.store';

const DAY_MS = 86_400_000;

/**
 * Offline scans of unknown tickets and of another event's tickets are kept this long (contract
 * section 20): long enough for any retried upload to replay its answer.
 */
export const UNMATCHED_SCAN_RETENTION_DAYS = 7;

/** Deletes every unmatched scan past its retention at `now`, batch after batch; returns how many went. */
export async function pruneUnmatchedScans(
  store: ScansRetentionStore,
  options: { now: Date; batchSize: number; stopRequested?: () => boolean; onPruned?: (count: number) => void },
): Promise<number> {
  const recordedBefore = new Date(options.now.getTime() - UNMATCHED_SCAN_RETENTION_DAYS * DAY_MS);
  let total = 0;
  while (!options.stopRequested?.()) {
    const count = await store.deleteUnmatchedScans(recordedBefore, options.batchSize);
    total += count;
    // Counted batch by batch: a sweep that fails later still shows what it deleted.
    if (count > 0) options.onPruned?.(count);
    if (count < options.batchSize) break;
  }
  return total;
}

/**
 * pruneUnmatchedScans every `intervalMs` (first after `firstDelayMs`), one sweep at a time, in
 * each service process beside the webhooks pruner; counted in `events_records_pruned_total{table="scans"}`.
 */
export function startScansRetention(options: {
  store: ScansRetentionStore;
  intervalMs: number;
  firstDelayMs: number;
  batchSize: number;
  logger: Logger;
  metrics?: Registry;
}): { stop(): Promise<void> } {
  const pruned = options.metrics
    ? registeredCounter(options.metrics, 'events_records_pruned_total', 'Rows the events retention sweeper deleted, by table.', ['table']).labels('scans')
    : undefined;
  pruned?.inc(0);
  const task = runPeriodically(
    async (stop) => {
      const scans = await pruneUnmatchedScans(options.store, {
        now: new Date(),
        batchSize: options.batchSize,
        stopRequested: () => stop.requested,
        onPruned: (count) => pruned?.inc(count),
      });
      if (scans > 0) options.logger.info({ scans }, 'unmatched scans pruned');
    },
    {
      firstDelayMs: options.firstDelayMs,
      intervalMs: options.intervalMs,
      onError: (err) => options.logger.warn({ err: err instanceof Error ? err.message : err }, 'scan retention failed; retrying next period'),
    },
  );
  return { stop: () => task.close() };
}
