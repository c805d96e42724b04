/**
 * Stock levels (contract section 18) as reads show them. A level's `reserved` here leaves out the
 * reservations already past their `expires_at`: they hold nothing from that instant on, whether
 * or not the sweeper has released them yet.
 */

/** One level of an item. `locationId` null: the unassigned level. */
export interface LevelStock {
  locationId: string | null;
  onHand: number;
  reserved: number;
}

/** One item's level at a location, as GET /locations/{id}/stock lists it; `id` and `createdAt` are the level's. */
export interface LocationStockRow {
  id: string;
  itemId: string;
  sku: string;
  onHand: number;
  reserved: number;
  createdAt: Date;
}

/** What can be reserved or transferred away. */
export function availableOf(level: { onHand: number; reserved: number }): number {
  return level.onHand - level.reserved;
}
