import { z } from 'zod';
import { ErrorBody, exampleOf, listOf, Uuid, UtcTimestamp } from '@platform/core';
import type { AdjustmentReason } from './generated/prisma/client';
import { RESERVATION_STATUSES } from './reservations';

/** The reasons of a stock adjustment (contract section 9), as the database's enum has them. */
export const ADJUSTMENT_REASONS = ['receipt', 'sale', 'return', 'damage', 'correction'] as const satisfies readonly AdjustmentReason[];

/**
 * The warehouse service's resources as the API returns them (contract sections 9 and 18). The render
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
    quantity: z.int().min(0).meta({ description: 'On hand: the sum of its levels; changed only by stock adjustments (and committed reservations).' }),
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
    quantity: z.int().meta({ description: "The on-hand quantity that moved: the old default level's, or the transfer's." }),
    reason: z.string().meta({ description: "`default_location_changed`: the item's `location_id` changed; `transfer`: a stock transfer." }),
    created_at: UtcTimestamp,
  })
  .meta({
    id: 'Movement',
    description: 'A move of stock between locations: a changed default location or a transfer.',
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
    location_id: Uuid.nullable().meta({ description: 'The level it applied to; null: the unassigned level.' }),
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
        location_id: EXAMPLE_LOCATION_ID,
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

const OnHand = z.int().min(0).meta({ description: 'Stock at the level.' });
const Reserved = z.int().min(0).meta({ description: 'Held by active reservations (those past `expires_at` hold nothing); at most `on_hand`.' });
const Available = z.int().min(0).meta({ description: '`on_hand - reserved`: what can be reserved or transferred away.' });

export const StockLevel = z
  .object({
    location_id: Uuid.nullable().meta({ description: 'null: the unassigned level (stock at no location).' }),
    on_hand: OnHand,
    reserved: Reserved,
    available: Available,
  })
  .meta({
    id: 'StockLevel',
    description: "An item's stock at one location.",
    examples: [{ location_id: EXAMPLE_LOCATION_ID, on_hand: 40, reserved: 3, available: 37 }],
  });
export type StockLevel = z.infer<typeof StockLevel>;

export const ItemStock = z
  .object({
    item_id: Uuid,
    quantity: z.int().min(0).meta({ description: "The item's `quantity`: the sum of `on_hand` over its levels." }),
    levels: z.array(StockLevel).meta({ description: 'The levels with `on_hand` or `reserved` not 0: the unassigned level first, then by `location_id`.' }),
  })
  .meta({
    id: 'ItemStock',
    description: "An item's stock per location.",
    examples: [
      {
        item_id: EXAMPLE_ITEM_ID,
        quantity: 42,
        levels: [
          { location_id: null, on_hand: 2, reserved: 0, available: 2 },
          { location_id: EXAMPLE_LOCATION_ID, on_hand: 40, reserved: 3, available: 37 },
        ],
      },
    ],
  });
export type ItemStock = z.infer<typeof ItemStock>;

export const LocationStockEntry = z.object({ item_id: Uuid, sku: z.string(), on_hand: OnHand, reserved: Reserved, available: Available }).meta({
  id: 'LocationStockEntry',
  description: "One item's stock at the location.",
  examples: [{ item_id: EXAMPLE_ITEM_ID, sku: 'TSHIRT-BLUE-M', on_hand: 40, reserved: 3, available: 37 }],
});
export type LocationStockEntry = z.infer<typeof LocationStockEntry>;

export const LocationStockList = z
  .object({
    data: z.array(LocationStockEntry),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `?cursor=` to get the next page; null on the last page.' }),
  })
  .meta({
    id: 'LocationStockList',
    description: 'One page of the items with stock at a location, by `sku` (Unicode code point order).',
    examples: [{ data: [exampleOf(LocationStockEntry)], next_cursor: null }],
  });

export const Transfer = z
  .object({
    id: Uuid.meta({ description: 'Also the id of the movement it wrote (`reason: "transfer"`).' }),
    item_id: Uuid,
    from_location_id: Uuid.nullable().meta({ description: 'null: the unassigned level.' }),
    to_location_id: Uuid.nullable().meta({ description: 'null: the unassigned level.' }),
    quantity: z.int().min(1),
    note: z.string().nullable(),
    created_at: UtcTimestamp,
  })
  .meta({
    id: 'Transfer',
    description: 'Stock moved between two levels of an item; its quantity is unchanged.',
    examples: [
      {
        id: '2b4d6f8a-0c2e-4a6c-8e0a-2c4e6a8c0e2a',
        item_id: EXAMPLE_ITEM_ID,
        from_location_id: EXAMPLE_LOCATION_ID,
        to_location_id: EXAMPLE_OTHER_LOCATION_ID,
        quantity: 5,
        note: 'Restock the shop floor',
        created_at: '2024-12-04T08:00:00.000Z',
      },
    ],
  });
export type Transfer = z.infer<typeof Transfer>;

export const TransferResult = z.object({ transfer: Transfer, item: Item }).meta({
  id: 'TransferResult',
  description: 'The transfer and the item (its quantity unchanged).',
  examples: [{ transfer: exampleOf(Transfer), item: itemExample }],
});
export type TransferResult = z.infer<typeof TransferResult>;

export const Reservation = z
  .object({
    id: Uuid,
    item_id: Uuid,
    location_id: Uuid.nullable().meta({ description: 'The level it holds stock at; null: the unassigned level.' }),
    quantity: z.int().min(1),
    status: z.enum(RESERVATION_STATUSES).meta({
      description: '`active` until committed, released or expired; an active reservation reads `expired` from its `expires_at` on.',
    }),
    reference: z.string().nullable().meta({ description: "The caller's reference, e.g. an order number." }),
    expires_at: UtcTimestamp,
    created_at: UtcTimestamp,
    updated_at: UtcTimestamp.meta({ description: "The last change of status; an expired reservation's is its `expires_at`." }),
  })
  .meta({
    id: 'Reservation',
    description: 'Stock held at one level for an order not yet shipped.',
    examples: [
      {
        id: '5e7a9c1e-3a5c-4e7a-9c1e-3a5c7e9a1c3e',
        item_id: EXAMPLE_ITEM_ID,
        location_id: EXAMPLE_LOCATION_ID,
        quantity: 3,
        status: 'active',
        reference: 'Order 1042',
        expires_at: '2024-12-04T08:15:00.000Z',
        created_at: '2024-12-04T08:00:00.000Z',
        updated_at: '2024-12-04T08:00:00.000Z',
      },
    ],
  });
export type Reservation = z.infer<typeof Reservation>;

const reservationExample = exampleOf(Reservation) as Reservation;

export const CommitResult = z.object({ reservation: Reservation, adjustment: Adjustment, item: Item }).meta({
  id: 'ReservationCommitResult',
  description: 'The committed reservation, the `sale` adjustment that took its stock off the level, and the item after it.',
  examples: [
    {
      reservation: { ...reservationExample, status: 'committed', updated_at: '2024-12-04T08:05:00.000Z' },
      adjustment: { ...adjustmentExample, delta: -3, quantity_after: 39, note: null, created_at: '2024-12-04T08:05:00.000Z' },
      item: { ...itemExample, quantity: 39, version: 4, updated_at: '2024-12-04T08:05:00.000Z' },
    },
  ],
});
export type CommitResult = z.infer<typeof CommitResult>;

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
export const ReservationList = listOf(Reservation, 'ReservationList');

export const EXAMPLE_IDS = { item: EXAMPLE_ITEM_ID, location: EXAMPLE_LOCATION_ID };
