import { timestamp } from '@platform/core';
import type {
  Item as ItemRow,
  Location as LocationRow,
  Movement as MovementRow,
  Reservation as ReservationRow,
  StockAdjustment,
} from './generated/prisma/client';
import type { Metadata } from './item-input';
import { availableOf, type LevelStock, type LocationStockRow } from './stock-levels';
import type { Adjustment, Item, ItemStock, Location, LocationStockEntry, Movement, Reservation, StockLevel, Transfer } from './warehouse.resources';

/**
 * The warehouse's resources as the API returns them (contract sections 9 and 18) and as its
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
    location_id: adjustment.locationId,
    delta: adjustment.delta,
    reason: adjustment.reason,
    note: adjustment.note,
    quantity_after: adjustment.quantityAfter,
    created_at: timestamp(adjustment.createdAt),
  };
}

/** A transfer as the API returns it: the movement it wrote, with its note. */
export function renderTransfer(movement: MovementRow): Transfer {
  const { reason: _reason, ...moved } = renderMovement(movement);
  return { ...moved, note: movement.note };
}

/** A reservation as stored; reads render `reservationAt(row, now)`, so a due one shows `expired`. */
export function renderReservation(reservation: ReservationRow): Reservation {
  return {
    id: reservation.id,
    item_id: reservation.itemId,
    location_id: reservation.locationId,
    quantity: reservation.quantity,
    status: reservation.status,
    reference: reservation.reference,
    expires_at: timestamp(reservation.expiresAt),
    created_at: timestamp(reservation.createdAt),
    updated_at: timestamp(reservation.updatedAt),
  };
}

export function renderLevel(level: LevelStock): StockLevel {
  return { location_id: level.locationId, on_hand: level.onHand, reserved: level.reserved, available: availableOf(level) };
}

/** GET /items/{id}/stock: the item's quantity and its levels (read in one snapshot). */
export function renderItemStock(item: ItemRow, levels: LevelStock[]): ItemStock {
  return { item_id: item.id, quantity: item.quantity, levels: levels.map(renderLevel) };
}

export function renderLocationStock(row: LocationStockRow): LocationStockEntry {
  return { item_id: row.itemId, sku: row.sku, on_hand: row.onHand, reserved: row.reserved, available: availableOf(row) };
}
