import { conflict, notFound, type WorkspaceId } from '@platform/core';
import { INT4_MAX } from './item-input';
import type { Item, StockAdjustment, StockChange, WarehouseStore } from './warehouse.store';

export { renderAdjustment } from './warehouse.render';

/**
 * Adjusts stock: one conditional UPDATE decides (never below 0, whatever runs concurrently), and
 * the adjustment record and its events commit in the same transaction (the store's adjustQuantity).
 */
export async function adjustStock(
  store: WarehouseStore,
  workspaceId: WorkspaceId,
  itemId: string,
  input: StockChange,
  now = new Date(),
): Promise<{ adjustment: StockAdjustment; item: Item }> {
  const done = await store.adjustQuantity(workspaceId, itemId, input, now);
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
