import { timestamp } from '@platform/core';
import type { Item as ItemRow, Location as LocationRow, Movement as MovementRow, StockAdjustment } from './generated/prisma/client';
import type { Metadata } from './item-input';
import type { Adjustment, Item, Location, Movement } from './warehouse.resources';

/**
 * The warehouse's resources as the API returns them (contract section 9) and as its `item.*`
 * webhook events carry them: the store renders each event with these same functions.
 */

/** A location as the API returns it. */
export function renderLocation(location: LocationRow): Location {
  return { id: location.id, name: location.name, code: location.code, created_at: timestamp(location.createdAt) };
}

/** An item as the API returns it (contract section 9). */
export function renderItem(item: ItemRow): Item {
  return {
    id: item.id,
    sku: item.sku,
    name: item.name,
    category: item.category,
    min_stock: item.minStock,
    location_id: item.locationId,
    // Only flat string maps are ever written.
    metadata: item.metadata as Metadata,
    quantity: item.quantity,
    version: item.version,
    created_at: timestamp(item.createdAt),
    updated_at: timestamp(item.updatedAt),
  };
}

/** A movement as the API returns it. */
export function renderMovement(movement: MovementRow): Movement {
  return {
    id: movement.id,
    item_id: movement.itemId,
    from_location_id: movement.fromLocationId,
    to_location_id: movement.toLocationId,
    quantity: movement.quantity,
    reason: movement.reason,
    created_at: timestamp(movement.createdAt),
  };
}

/** An adjustment as the API returns it. */
export function renderAdjustment(adjustment: StockAdjustment): Adjustment {
  return {
    id: adjustment.id,
    item_id: adjustment.itemId,
    delta: adjustment.delta,
    reason: adjustment.reason,
    note: adjustment.note,
    quantity_after: adjustment.quantityAfter,
    created_at: timestamp(adjustment.createdAt),
  };
}
