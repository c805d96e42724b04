import { notFound, type WorkspaceId } from '@platform/core';
import { getItem } from './items.service';
import { reservationAt } from './reservations';
import { checkLocations, refusalError } from './stock.service';
import type { ReservationInput } from './stock.store';
import type { Item, Reservation, StockAdjustment, WarehouseStore } from './warehouse.store';

export { renderReservation } from './warehouse.render';

/**
 * Holds available stock at one level until `expires_at` (`reservation.created`); more than available
 * is 409 `insufficient_stock`, one more than the workspace's `limit` of active reservations 409 `quota_exceeded`.
 */
export async function createReservation(
  store: WarehouseStore,
  workspaceId: WorkspaceId,
  itemId: string,
  input: ReservationInput,
  limit: number,
): Promise<Reservation> {
  await checkLocations(store, workspaceId, itemId, { location_id: input.locationId });
  const done = await store.reserve(workspaceId, itemId, input, limit);
  if ('refused' in done) throw refusalError(done, { field: 'quantity', what: 'reservation', quantity: input.quantity });
  return done;
}

/** A reservation as of `now` (a due one reads `expired`). */
export async function getReservation(store: WarehouseStore, workspaceId: WorkspaceId, id: string, now = new Date()): Promise<Reservation> {
  const reservation = await store.findReservation(workspaceId, id);
  if (!reservation) throw notFound('Reservation');
  return reservationAt(reservation, now);
}

/** One page of an item's reservations, oldest first, each as of `now`. */
export async function listReservations(
  store: WarehouseStore,
  workspaceId: WorkspaceId,
  itemId: string,
  filter: Parameters<WarehouseStore['listReservations']>[2],
  now = new Date(),
): Promise<Reservation[]> {
  await getItem(store, workspaceId, itemId);
  const rows = await store.listReservations(workspaceId, itemId, filter, now);
  return rows.map((row) => reservationAt(row, now));
}

/** The reserved stock leaves its level as one `sale` adjustment; 409 `reservation_not_active` unless active (an expired one included). */
export async function commitReservation(
  store: WarehouseStore,
  workspaceId: WorkspaceId,
  id: string,
): Promise<{ reservation: Reservation; adjustment: StockAdjustment; item: Item }> {
  const done = await store.commitReservation(workspaceId, id);
  if ('refused' in done) throw refusalError(done, { field: 'id', what: 'committed', quantity: 0 });
  return done;
}

/** The reserved stock is available again; 409 `reservation_not_active` unless active. */
export async function releaseReservation(store: WarehouseStore, workspaceId: WorkspaceId, id: string): Promise<Reservation> {
  const done = await store.releaseReservation(workspaceId, id);
  if ('refused' in done) throw refusalError(done, { field: 'id', what: 'released', quantity: 0 });
  return done;
}
