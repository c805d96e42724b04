import { conflict, notFound, outboxEvent, timestamp, type WorkspaceId } from '@platform/core';
import { INT4_MAX } from './item-input';
import { renderItem } from './items.service';
import type { Adjustment } from './warehouse.resources';
import type { AdjustmentReason, Item, StockAdjustment, WarehouseStore } from './warehouse.store';

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

export interface StockChange {
  delta: number;
  reason: AdjustmentReason;
  note: string | null;
}

/** True when this change takes the quantity from at or above `min_stock` to below it. */
export function crossesBelowMinStock(minStock: number | null, before: number, after: number): boolean {
  return minStock !== null && before >= minStock && after < minStock;
}

/**
 * Adjusts stock: one conditional UPDATE decides (never below 0, whatever runs concurrently), and
 * the adjustment record and its events commit in the same transaction. `item.reorder_needed` is
 * written once, when the quantity crosses below min_stock, not again while it stays below.
 */
export async function adjustStock(
  store: WarehouseStore,
  workspaceId: WorkspaceId,
  itemId: string,
  input: StockChange,
  now = new Date(),
): Promise<{ adjustment: StockAdjustment; item: Item }> {
  const done = await store.transaction(async (tx) => {
    const item = await tx.addToQuantity(workspaceId, itemId, input.delta, now);
    if (!item) return null;
    const adjustment = await tx.createAdjustment(workspaceId, { itemId, ...input, quantityAfter: item.quantity, createdAt: now });
    const events = [outboxEvent('item.stock_adjusted', workspaceId, renderAdjustment(adjustment), now)];
    if (crossesBelowMinStock(item.minStock, item.quantity - input.delta, item.quantity)) {
      events.push(outboxEvent('item.reorder_needed', workspaceId, renderItem(item), now));
    }
    await tx.recordEvents(events);
    return { adjustment, item };
  });
  if (done) return done;

  // The update matched no row: say why.
  const item = await store.findItem(workspaceId, itemId);
  if (!item) throw notFound('Item');
  if (input.delta < 0) {
    throw conflict(`Insufficient stock: ${item.quantity} on hand, the adjustment removes ${-input.delta}.`, undefined, [
      { in: 'body', field: 'delta', code: 'insufficient_stock', message: 'would take the quantity below 0' },
    ]);
  }
  throw conflict(`The quantity cannot exceed ${INT4_MAX}.`, undefined, [
    { in: 'body', field: 'delta', code: 'too_large', message: `would take the quantity above ${INT4_MAX}` },
  ]);
}
