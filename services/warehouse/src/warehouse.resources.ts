import { z } from 'zod';
import { ErrorBody, exampleOf, listOf, Uuid, UtcTimestamp } from '@platform/core';
import type { AdjustmentReason } from './generated/prisma/client';

/** The reasons of a stock adjustment (contract section 9), as the database's enum has them. */
export const ADJUSTMENT_REASONS = ['receipt', 'sale', 'return', 'damage', 'correction'] as const satisfies readonly AdjustmentReason[];

/**
 * The warehouse service's resources as the API returns them (contract section 9). The render
 * functions are typed against these schemas and the API reference is generated from them.
 */

const EXAMPLE_ITEM_ID = '4a6c8e0f-2b4d-4f6a-8c0e-2a4c6e8f0b2d';
const EXAMPLE_LOCATION_ID = '1b3d5f7a-9c1e-4a3c-9e5f-7b9d1f3a5c7e';
const EXAMPLE_OTHER_LOCATION_ID = '8f0a2c4e-6b8d-4f1a-b3c5-e7f9a1b3c5d7';

export const Location = z.object({ id: Uuid, name: z.string(), code: z.string(), created_at: UtcTimestamp }).meta({
  id: 'Location',
  description: 'A storage location; its code is unique in the workspace.',
  examples: [{ id: EXAMPLE_LOCATION_ID, name: 'Main warehouse, aisle 3', code: 'MAIN-A3', created_at: '2024-12-01T09:30:00.000Z' }],
});
export type Location = z.infer<typeof Location>;

export const Item = z
  .object({
    id: Uuid,
    sku: z.string(),
    name: z.string(),
    category: z.string().nullable(),
    min_stock: z.int().min(0).nullable().meta({ description: 'Below it, `item.reorder_needed` is sent; null: no automatic reorder.' }),
    location_id: Uuid.nullable().meta({ description: 'The default location.' }),
    metadata: z.record(z.string(), z.string()),
    quantity: z.int().min(0).meta({ description: 'On hand; changed only by stock adjustments.' }),
    version: z.int().min(1).meta({ description: 'Counts every change; the `ETag` is this number, quoted.' }),
    created_at: UtcTimestamp,
    updated_at: UtcTimestamp,
  })
  .meta({
    id: 'Item',
    description: 'An item of the inventory, with its on-hand quantity.',
    examples: [
      {
        id: EXAMPLE_ITEM_ID,
        sku: 'TSHIRT-BLUE-M',
        name: 'T-shirt, blue, M',
        category: 'apparel',
        min_stock: 10,
        location_id: EXAMPLE_LOCATION_ID,
        metadata: { colour: 'blue' },
        quantity: 42,
        version: 3,
        created_at: '2024-12-01T09:30:00.000Z',
        updated_at: '2024-12-02T14:00:00.000Z',
      },
    ],
  });
export type Item = z.infer<typeof Item>;

export const Movement = z
  .object({
    id: Uuid,
    item_id: Uuid,
    from_location_id: Uuid.nullable(),
    to_location_id: Uuid.nullable(),
    quantity: z.int().meta({ description: 'The on-hand quantity that moved with the item.' }),
    reason: z.string().meta({ description: "`default_location_changed`: the item's `location_id` changed." }),
    created_at: UtcTimestamp,
  })
  .meta({
    id: 'Movement',
    description: 'A move of an item between locations.',
    examples: [
      {
        id: '3c5e7a9b-1d3f-4b5d-8f1a-3c5e7a9b1d3f',
        item_id: EXAMPLE_ITEM_ID,
        from_location_id: EXAMPLE_OTHER_LOCATION_ID,
        to_location_id: EXAMPLE_LOCATION_ID,
        quantity: 42,
        reason: 'default_location_changed',
        created_at: '2024-12-02T14:00:00.000Z',
      },
    ],
  });
export type Movement = z.infer<typeof Movement>;

export const Adjustment = z
  .object({
    id: Uuid,
    item_id: Uuid,
    delta: z.int(),
    reason: z.enum(ADJUSTMENT_REASONS),
    note: z.string().nullable(),
    quantity_after: z.int().min(0),
    created_at: UtcTimestamp,
  })
  .meta({
    id: 'StockAdjustment',
    description: "A change of an item's on-hand quantity.",
    examples: [
      {
        id: '6d8f0b2d-4f6a-4c8e-a0b2-d4f6a8c0e2b4',
        item_id: EXAMPLE_ITEM_ID,
        delta: -2,
        reason: 'sale',
        note: 'Order 1042',
        quantity_after: 40,
        created_at: '2024-12-03T10:15:00.000Z',
      },
    ],
  });
export type Adjustment = z.infer<typeof Adjustment>;

const itemExample = exampleOf(Item) as Item;
const adjustmentExample = exampleOf(Adjustment) as Adjustment;

export const AdjustmentResult = z.object({ adjustment: Adjustment, item: Item }).meta({
  id: 'StockAdjustmentResult',
  description: 'The adjustment and the item after it.',
  examples: [{ adjustment: adjustmentExample, item: { ...itemExample, quantity: 40, version: 4, updated_at: '2024-12-03T10:15:00.000Z' } }],
});
export type AdjustmentResult = z.infer<typeof AdjustmentResult>;

/** An error as a bulk entry reports it: the contract's `error` without `request_id`. */
const BulkEntryError = ErrorBody.shape.error.omit({ request_id: true });

export const BulkResult = z.union([
  z.object({ id: z.string().nullable(), status: z.int(), item: Item }),
  z.object({ id: z.string().nullable(), status: z.int(), error: BulkEntryError }),
]);
export type BulkResult = z.infer<typeof BulkResult>;

export const BulkAnswer = z
  .object({
    results: z.array(BulkResult).meta({
      description: 'One result per entry, in order: `status` is what the entry would have answered as a PATCH of its own, with the `item` or the `error`.',
    }),
  })
  .meta({
    id: 'BulkUpdateResult',
    examples: [
      {
        results: [
          { id: EXAMPLE_ITEM_ID, status: 200, item: itemExample },
          {
            id: '0e2a4c6e-8f0b-4d2f-a6c8-e0a2c4e6f8b0',
            status: 404,
            error: { code: 'not_found', message: 'Item not found.' },
          },
        ],
      },
    ],
  });
export type BulkAnswer = z.infer<typeof BulkAnswer>;

export const LocationList = listOf(Location, 'LocationList');
export const ItemList = listOf(Item, 'ItemList');
export const MovementList = listOf(Movement, 'MovementList');

export const EXAMPLE_IDS = { item: EXAMPLE_ITEM_ID, location: EXAMPLE_LOCATION_ID };
