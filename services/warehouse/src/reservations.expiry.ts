import { registeredCounter, runPeriodically, type Logger, type Registry } from '@platform/core';
import type { ReservationsExpiryStore } from './reservations-expiry.store';

const DAY_MS = 86_400_000;

/**
 * Expires every reservation due at `now`, item by item (each in its own transaction, batch after
 * batch); returns how many expired. A pass that finds nothing due, or expires nothing (every due
 * item held by another sweeper or a request, which release them themselves), ends the sweep.
 */
export async function sweepDueReservations(
  store: ReservationsExpiryStore,
  options: { now: Date; batchSize: number; stopRequested?: () => boolean; onExpired?: (count: number) => void },
): Promise<number> {
  let total = 0;
  while (!options.stopRequested?.()) {
    const items = await store.itemsWithDueReservations(options.now, options.batchSize);
    let expired = 0;
    for (const { workspaceId, itemId } of items) {
      if (options.stopRequested?.()) break;
      const count = await store.expireItem(workspaceId, itemId);
      // Counted item by item: a sweep that fails later still shows what it expired.
      if (count > 0) options.onExpired?.(count);
      expired += count;
    }
    total += expired;
    if (expired === 0) break;
  }
  return total;
}

/** Deletes the reservations that ended more than `retentionDays` before `now`, batch after batch; returns how many went. */
export async function pruneEndedReservations(
  store: ReservationsExpiryStore,
  options: { now: Date; retentionDays: number; batchSize: number; stopRequested?: () => boolean; onPruned?: (count: number) => void },
): Promise<number> {
  const endedBefore = new Date(options.now.getTime() - options.retentionDays * DAY_MS);
  let total = 0;
  while (!options.stopRequested?.()) {
    const count = await store.deleteEnded(endedBefore, options.batchSize);
    total += count;
    if (count > 0) options.onPruned?.(count);
    if (count < options.batchSize) break;
  }
  return total;
}

/**
 * The reservations sweeper of each warehouse process: every `intervalMs` (one sweep at a time) it
 * expires the due reservations, so `reservation.expired` is written within `intervalMs` plus a
 * sweep of `expires_at`, and deletes ended ones past their retention. Reads and writes never wait
 * for it: they treat a due reservation as expired themselves. Counted in
 * `warehouse_reservations_expired_total` and `warehouse_records_pruned_total{table="reservations"}`.
 */
export function startReservationsSweeper(options: {
  store: ReservationsExpiryStore;
  intervalMs: number;
  batchSize: number;
  retentionDays: number;
  logger: Logger;
  metrics?: Registry;
}): { stop(): Promise<void> } {
  const expiredCounter = options.metrics
    ? registeredCounter(options.metrics, 'warehouse_reservations_expired_total', 'Reservations the sweeper expired.', [])
    : undefined;
  const prunedCounter = options.metrics
    ? registeredCounter(options.metrics, 'warehouse_records_pruned_total', 'Rows the warehouse retention sweeper deleted, by table.', ['table']).labels(
        'reservations',
      )
    : undefined;
  expiredCounter?.inc(0);
  prunedCounter?.inc(0);
  const task = runPeriodically(
    async (stop) => {
      const now = new Date();
      const stopRequested = () => stop.requested;
      const expired = await sweepDueReservations(options.store, { now, batchSize: options.batchSize, stopRequested, onExpired: (n) => expiredCounter?.inc(n) });
      const pruned = await pruneEndedReservations(options.store, {
        now,
        retentionDays: options.retentionDays,
        batchSize: options.batchSize,
        stopRequested,
        onPruned: (n) => prunedCounter?.inc(n),
      });
      if (expired > 0 || pruned > 0) options.logger.info({ expired, pruned }, 'reservations swept');
    },
    {
      firstDelayMs: options.intervalMs,
      intervalMs: options.intervalMs,
      onError: (err) => options.logger.warn({ err: err instanceof Error ? err.message : err }, 'reservations sweep failed; retrying next period'),
    },
  );
  return { stop: () => task.close() };
}
