import { ApiError, conflict, invalidRequest, notFound, quotaExceeded, type WorkspaceId } from '@platform/core';
import { INT4_MAX } from './item-input';
import { locationErrors } from './locations.service';
import type { LevelStock, LocationStockRow } from './stock-levels';
import type { AdjustmentInput, StockRefusal, TransferInput } from './stock.store';
import type { Item, Movement, StockAdjustment, WarehouseStore } from './warehouse.store';

export { renderAdjustment, renderItemStock, renderLocationStock, renderTransfer } from './warehouse.render';

/** What a stock write calls the stock it takes, for a 409's message. */
type Taking = { field: string; what: string; quantity: number };

/** The contract's answer for a write the store refused (contract sections 9 and 18). */
export function refusalError(refusal: StockRefusal, taking: Taking): ApiError {
  switch (refusal.refused) {
    case 'item_not_found':
      return notFound('Item');
    case 'reservation_not_found':
      return notFound('Reservation');
    case 'insufficient_stock':
      return conflict(`Insufficient stock: ${refusal.available} available at the level, the ${taking.what} takes ${taking.quantity}.`, undefined, [
        { in: 'body', field: taking.field, code: 'insufficient_stock', message: `is more than the ${refusal.available} available at the level` },
      ]);
    case 'too_large':
      return conflict(`The quantity cannot exceed ${INT4_MAX}.`, undefined, [
        { in: 'body', field: taking.field, code: 'too_large', message: `would take the quantity above ${INT4_MAX}` },
      ]);
    case 'reservation_not_active':
      return conflict(`The reservation is ${refusal.status}, not active.`, { status: refusal.status }, [
        { in: 'path', field: 'id', code: 'reservation_not_active', message: `is ${refusal.status}; only an active reservation can be ${taking.what}` },
      ]);
    case 'limit_reached':
      return quotaExceeded(refusal.quota, refusal.limit);
  }
}

/**
 * 400 `not_found` for each named location that is not the workspace's, all at once; an unknown
 * item is the 404 it would have been without them.
 */
export async function checkLocations(
  store: WarehouseStore,
  workspaceId: WorkspaceId,
  itemId: string,
  locations: Record<string, string | null | undefined>,
): Promise<void> {
  const problems = (await Promise.all(Object.entries(locations).map(([field, id]) => locationErrors(store, workspaceId, id, field)))).flat();
  if (problems.length === 0) return;
  if (!(await store.findItem(workspaceId, itemId))) throw notFound('Item');
  throw invalidRequest(problems);
}

/**
 * Adjusts stock at one level (default: the item's default location): one conditional UPDATE of the
 * level decides (never below its reserved stock, whatever runs concurrently), and the item's
 * quantity, the adjustment record and its events commit in the same transaction.
 */
export async function adjustStock(
  store: WarehouseStore,
  workspaceId: WorkspaceId,
  itemId: string,
  input: AdjustmentInput,
): Promise<{ adjustment: StockAdjustment; item: Item }> {
  await checkLocations(store, workspaceId, itemId, { location_id: input.locationId });
  const done = await store.adjustStock(workspaceId, itemId, input);
  if ('refused' in done) throw refusalError(done, { field: 'delta', what: 'adjustment', quantity: -input.delta });
  return done;
}

/** Moves available stock between two levels of an item (one movement, `item.stock_transferred`). */
export async function transferStock(
  store: WarehouseStore,
  workspaceId: WorkspaceId,
  itemId: string,
  input: TransferInput,
): Promise<{ transfer: Movement; item: Item }> {
  await checkLocations(store, workspaceId, itemId, { from_location_id: input.fromLocationId, to_location_id: input.toLocationId });
  const done = await store.transfer(workspaceId, itemId, input);
  if ('refused' in done) throw refusalError(done, { field: 'quantity', what: 'transfer', quantity: input.quantity });
  return done;
}

/** An item's quantity and its non-zero levels, as of `now`. */
export async function itemStock(
  store: WarehouseStore,
  workspaceId: WorkspaceId,
  itemId: string,
  now = new Date(),
): Promise<{ item: Item; levels: LevelStock[] }> {
  const stock = await store.itemStock(workspaceId, itemId, now);
  if (!stock) throw notFound('Item');
  return stock;
}

/** One page of a location's stock, as of `now`; an unknown location (or another workspace's) is 404. */
export async function locationStock(
  store: WarehouseStore,
  workspaceId: WorkspaceId,
  locationId: string,
  page: Parameters<WarehouseStore['locationStock']>[2],
  now = new Date(),
): Promise<LocationStockRow[]> {
  if (!(await store.locationExists(workspaceId, locationId))) throw notFound('Location');
  return store.locationStock(workspaceId, locationId, page, now);
}
