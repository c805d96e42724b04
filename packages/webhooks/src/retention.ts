import type { Logger } from '@platform/core';
import { runPeriodically, type PeriodicTask, type StopRequest } from '@platform/core';
import type { SqlClient } from './sql';
import { retentionStore, type RetentionStore } from './webhooks.store';

const DAY_MS = 86_400_000;

/** The tables retention prunes (the `table` label of `webhook_records_pruned_total`). */
export const PRUNED_TABLES = ['outbox_events', 'webhook_deliveries'] as const;
export type PrunedTable = (typeof PRUNED_TABLES)[number];

export interface RetentionPeriods {
  /** Days a published outbox row is kept after `published_at`. */
  outboxDays: number;
  /** Days a delivery record is kept after `created_at`. */
  deliveryDays: number;
}

/**
 * Deletes published outbox rows and delivery records past their retention at `now`, `batchSize`
 * rows per statement, table after table, until a batch comes back short or `stop` is requested
 * (so close() waits for one statement at most). Returns how many rows of each table went.
 */
export async function pruneWebhookRecords(
  store: RetentionStore,
  options: { now: Date; periods: RetentionPeriods; batchSize: number; stop?: StopRequest; onPruned?: (table: PrunedTable, count: number) => void },
): Promise<Record<PrunedTable, number>> {
  const { now, periods, batchSize } = options;
  const cutoff = (days: number) => new Date(now.getTime() - days * DAY_MS);
  const batches: Record<PrunedTable, () => Promise<number>> = {
    outbox_events: () => store.deletePublishedOutboxEvents(cutoff(periods.outboxDays), batchSize),
    webhook_deliveries: () => store.deleteDeliveries(cutoff(periods.deliveryDays), batchSize),
  };
  const pruned: Record<PrunedTable, number> = { outbox_events: 0, webhook_deliveries: 0 };
  for (const table of PRUNED_TABLES) {
    while (!options.stop?.requested) {
      const count = await batches[table]();
      pruned[table] += count;
      // Counted batch by batch: a run that fails later still shows what it deleted.
      if (count > 0) options.onPruned?.(table, count);
      if (count < batchSize) break;
    }
  }
  return pruned;
}

export interface RetentionPrunerOptions {
  sql: SqlClient;
  periods: RetentionPeriods;
  /** Between the end of one run and the next (default 1 h). */
  intervalMs?: number;
  /** Before the first run (default 1 min). */
  firstRunDelayMs?: number;
  /** Rows per DELETE (default 1,000). */
  batchSize?: number;
  /** The clock the cut-offs are taken from (tests). */
  now?: () => Date;
  logger?: Logger;
  onPruned?: (table: PrunedTable, count: number) => void;
}

export type RetentionPruner = PeriodicTask;

/**
 * Deletes a service's webhook records past their retention, periodically, in the service's own
 * process: published outbox rows and delivery records; unpublished outbox rows are never deleted.
 * Any number of pruners may run (one per service instance): SKIP LOCKED gives each its own rows.
 * close() waits for the statement in flight.
 */
export function startRetentionPruner(options: RetentionPrunerOptions): RetentionPruner {
  const store = retentionStore(options.sql);
  const batchSize = options.batchSize ?? 1000;
  const now = options.now ?? (() => new Date());
  return runPeriodically(
    async (stop) => {
      const pruned = await pruneWebhookRecords(store, { now: now(), periods: options.periods, batchSize, stop, onPruned: options.onPruned });
      if (pruned.outbox_events + pruned.webhook_deliveries > 0) options.logger?.info(pruned, 'webhook records pruned');
    },
    {
      // Hourly is enough for periods counted in days; a backlog is deleted within one run, batch by batch.
      intervalMs: options.intervalMs ?? 3_600_000,
      // Soon after start, so processes restarted more often than hourly still prune, but not during start-up.
      firstDelayMs: options.firstRunDelayMs ?? 60_000,
      onError: (err) => options.logger?.warn({ err }, 'webhook retention failed; retrying next period'),
    },
  );
}
