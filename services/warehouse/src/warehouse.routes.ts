import { z } from 'zod';
import {
  codePointString,
  type Cursor,
  type ErrorDoc,
  limitExceededDoc,
  ListQuery,
  type Logger,
  pageOf,
  resource,
  route,
  type RouteDeclaration,
  type RouteDefinition,
  type RoutesOf,
  Slug,
  stringMap,
  Uuid,
  type WebhookRouteKey,
} from '@platform/core';
import { webhookRouteDeclarations } from '@platform/webhooks';
import { INT4_MAX, ItemPatch, itemEtag, LocationId, NewItem, parseIfMatch, Sku, type IfMatch } from './item-input';
import { createItem, getItem, listMovements, renderItem, renderMovement, updateItem, updateItems } from './items.service';
import { createLocation, renderLocation } from './locations.service';
import { DEFAULT_EXPIRES_IN_SECONDS, MAX_EXPIRES_IN_SECONDS, MIN_EXPIRES_IN_SECONDS, RESERVATION_STATUSES } from './reservations';
import { commitReservation, createReservation, getReservation, listReservations, releaseReservation, renderReservation } from './reservations.service';
import { adjustStock, itemStock, locationStock, renderAdjustment, renderItemStock, renderLocationStock, renderTransfer, transferStock } from './stock.service';
import {
  AdjustmentResult,
  BulkAnswer,
  CommitResult,
  EXAMPLE_IDS,
  Item,
  ItemList,
  ItemStock,
  Location,
  LocationList,
  LocationStockList,
  MovementList,
  Reservation,
  ReservationList,
  TransferResult,
} from './warehouse.resources';
import { AdjustmentReason, type Item as ItemRow, type WarehouseStore } from './warehouse.store';
import type { WarehouseLimitName, WarehouseLimits } from './workspace-limits';

const IdParams = z.object({ id: Uuid });

export const CreateLocationBody = z.strictObject({
  name: codePointString(1, 200),
  code: z
    .string()
    .regex(/^[A-Za-z0-9._-]+$/, 'must be letters, digits, ".", "_" or "-"')
    .pipe(codePointString(1, 64)),
});

/**
 * Item bodies are any JSON object here: items.service parses them together with the checks that
 * need the database (location of the workspace, merged metadata), so one 400 lists every problem,
 * and a bulk entry is judged exactly like a PATCH of its own.
 */
const ItemBody = stringMap(z.unknown());

export const BulkBody = z.strictObject({
  items: z.array(ItemBody).min(1, 'must have at least 1 item').max(100, 'must have at most 100 items'),
});

/** A filter sent empty (`?sku=&category=`, as the contract writes the route) filters nothing. */
function filter<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => (value === '' ? undefined : value), schema.optional());
}

export const ListItemsQuery = ListQuery.extend({
  sku: filter(Sku).meta({ description: 'Only the item with this sku; empty filters nothing.' }),
  category: filter(Slug).meta({ description: 'Only items of this category; empty filters nothing.' }),
});

const IfMatchHeaders = z.object({
  'if-match': z
    .string()
    .transform((value, ctx): IfMatch => {
      const parsed = parseIfMatch(value);
      if (parsed === undefined) {
        ctx.addIssue({ code: 'custom', message: 'must be "*" or an ETag of this item, e.g. "3"', params: { code: 'invalid_format' } });
        return z.NEVER;
      }
      return parsed;
    })
    .optional()
    .meta({ description: 'An `ETag` of the item (or `*`): the update applies only to that version, else 409.' }),
});

/** A level named in a body: a location of the workspace (else 400 `not_found`), or null for the unassigned level. */
const LevelLocation = LocationId.nullable();

/** A quantity of stock moved or held (contract section 18). */
const StockQuantity = z.int().min(1, 'must be at least 1').max(1_000_000_000, 'must be at most 1000000000');

export const AdjustmentBody = z.strictObject({
  location_id: LevelLocation.optional().meta({
    description: "The level the delta applies to: a location of the workspace, or null for the unassigned level; default: the item's default `location_id`.",
  }),
  delta: z
    .int()
    .min(-INT4_MAX, `must be at least ${-INT4_MAX}`)
    .max(INT4_MAX, `must be at most ${INT4_MAX}`)
    .refine((delta) => delta !== 0, { message: 'must be a non-zero integer', params: { code: 'invalid_value' } })
    .meta({ description: 'Added to the on-hand quantity; not 0.', not: { const: 0 } }),
  reason: z.enum(AdjustmentReason),
  note: codePointString(1, 500).nullable().optional(),
});

export const TransferBody = z
  .strictObject({
    from_location_id: LevelLocation.meta({ description: 'The level the stock leaves: a location of the workspace, or null for the unassigned level.' }),
    to_location_id: LevelLocation.meta({ description: 'The level the stock goes to; never the same as `from_location_id`.' }),
    quantity: StockQuantity.meta({ description: 'At most what is available at the source.' }),
    note: codePointString(1, 500).nullable().optional(),
  })
  .superRefine((body, ctx) => {
    if (body.from_location_id === body.to_location_id) {
      ctx.addIssue({ code: 'custom', path: ['to_location_id'], message: 'must differ from from_location_id', params: { code: 'same_location' } });
    }
  });

export const ReservationBody = z.strictObject({
  location_id: LevelLocation.optional().meta({
    description: "The level to hold stock at: a location of the workspace, or null for the unassigned level; default: the item's default `location_id`.",
  }),
  quantity: StockQuantity.meta({ description: 'At most what is available at the level.' }),
  expires_in_seconds: z
    .int()
    .min(MIN_EXPIRES_IN_SECONDS, `must be at least ${MIN_EXPIRES_IN_SECONDS}`)
    .max(MAX_EXPIRES_IN_SECONDS, `must be at most ${MAX_EXPIRES_IN_SECONDS}`)
    .default(DEFAULT_EXPIRES_IN_SECONDS)
    .meta({ description: 'From now until the reservation expires and holds nothing.' }),
  reference: codePointString(1, 200).nullable().optional().meta({ description: 'Yours to set, e.g. an order number.' }),
});

export const ListReservationsQuery = ListQuery.extend({
  status: filter(z.enum(RESERVATION_STATUSES)).meta({ description: 'Only reservations with this status (as of now); empty filters nothing.' }),
});

/** Commit and release take no fields: an empty body counts as `{}`. */
const NoBody = z.strictObject({});

const INSUFFICIENT_STOCK = (field: string, message: string) => ({
  description: `More than is available at the level (\`errors[0] = { field: "${field}", code: "insufficient_stock" }\`), also under any number of concurrent writes.`,
  example: {
    code: 'conflict' as const,
    message,
    errors: [{ in: 'body' as const, field, code: 'insufficient_stock', message: 'is more than the 2 available at the level' }],
  },
});
const UNKNOWN_LOCATION = '`location_id` that names no location of the workspace: `not_found` on that field.';
const RESERVATION_NOT_ACTIVE = (done: string) => ({
  description: `The reservation is not \`active\` (already ${done}, or the other end, or expired): \`errors[0].code: reservation_not_active\`, its \`status\` beside \`code\`.`,
  example: {
    code: 'conflict' as const,
    message: 'The reservation is expired, not active.',
    status: 'expired',
    errors: [{ in: 'path' as const, field: 'id', code: 'reservation_not_active', message: `is expired; only an active reservation can be ${done}` }],
  },
});

/**
 * A create's one 409: its own conflict (`refusal`) or one more than the workspace's limit of `limit`,
 * whose answer is the example (the one with fields beside `code`).
 */
function orLimitExceeded(refusal: ErrorDoc, limit: WarehouseLimitName, what: string): ErrorDoc {
  return limitExceededDoc(
    `${refusal.description} Or, judged before that, the workspace already has as many ${what} as the platform allows one workspace ` +
      `(\`errors[0] = { field: "", code: "quota_exceeded" }\`, \`error.quota: "${limit}"\`, \`error.limit\` its value), also under concurrent requests; nothing was written.`,
    limit,
  );
}

function itemReply(status: number, item: ItemRow) {
  return { status, body: renderItem(item), headers: { etag: itemEtag(item.version) } };
}

const ETAG = {
  ETag: {
    description: 'The item\'s version, quoted (`"3"`): send it as `If-Match` to update only that version.',
    schema: z.string().meta({ examples: ['"3"'] }),
  },
};
const SKU_TAKEN = {
  description: 'The `sku` is already used by another item of the workspace (`errors[0] = { field: "sku", code: "taken" }`), also under concurrent writes.',
  example: {
    code: 'conflict' as const,
    message: 'The sku is already taken.',
    errors: [{ in: 'body' as const, field: 'sku', code: 'taken', message: 'is already used by another item of this workspace' }],
  },
};
const ITEM_FIELD_RULES =
  'All problems are reported at once: `location_id` of no location of the workspace (`not_found`), metadata over 20 keys after the merge (`too_many_keys`), ' +
  '`quantity` or any unknown field (`unknown_field`; stock changes go through stock adjustments).';

/** The body of one bulk entry as items.service parses it: an item id and the PATCH fields. */
const BulkEntry = ItemPatch.extend({ id: Uuid.meta({ description: 'The item to update.' }) });
const DocumentedBulkBody = BulkBody.extend({ items: z.array(BulkEntry).min(1).max(100) });

const item = resource({ name: 'item', params: IdParams, schema: Item });
const location = resource({ name: 'location', params: IdParams, schema: Location });
const reservation = resource({ name: 'reservation', params: IdParams, schema: Reservation });

/** What each route of the warehouse service takes and answers (no handlers): the definitions below validate it, the OpenAPI document describes it. */
export const warehouseRouteDeclarations = {
  ...webhookRouteDeclarations,
  'POST /locations': {
    body: CreateLocationBody,
    docs: {
      operationId: 'createLocation',
      summary: 'Create a location',
      responses: { 201: { description: 'The location.', schema: Location } },
      errors: {
        409: orLimitExceeded(
          { description: 'The `code` is already used by another location of the workspace (`errors[0] = { field: "code", code: "taken" }`).' },
          'locations',
          'locations',
        ),
      },
      requestExample: { name: 'Main warehouse, aisle 3', code: 'MAIN-A3' },
    },
  },
  'GET /locations': {
    query: ListQuery,
    docs: {
      operationId: 'listLocations',
      summary: 'List locations',
      responses: { 200: { description: 'One page of locations, oldest first.', schema: LocationList } },
    },
  },
  'POST /items': {
    body: ItemBody,
    docs: {
      operationId: 'createItem',
      summary: 'Create an item',
      description: 'The item starts with quantity 0; stock comes in through stock adjustments. Emits `item.created`.',
      body: NewItem,
      responses: { 201: { description: 'The item.', schema: Item, headers: ETAG } },
      errors: { 400: ITEM_FIELD_RULES, 409: orLimitExceeded(SKU_TAKEN, 'items', 'items') },
      requestExample: {
        sku: 'TSHIRT-BLUE-M',
        name: 'T-shirt, blue, M',
        category: 'apparel',
        min_stock: 10,
        location_id: EXAMPLE_IDS.location,
        metadata: { colour: 'blue' },
      },
    },
  },
  'GET /items': {
    query: ListItemsQuery,
    docs: {
      operationId: 'listItems',
      summary: 'List items',
      responses: { 200: { description: 'One page of items, oldest first.', schema: ItemList } },
    },
  },
  'POST /items/bulk': {
    body: BulkBody,
    entries: ['items'],
    docs: {
      operationId: 'bulkUpdateItems',
      summary: 'Update items in bulk',
      tag: 'Items',
      description:
        'Applies 1-100 entries in order, each exactly like a PATCH of its own (own transaction, own events); a failing entry does not stop the others. ' +
        'Counts in its own rate-limit bucket.',
      body: DocumentedBulkBody,
      responses: { 200: { description: 'One result per entry.', schema: BulkAnswer } },
      requestExample: {
        items: [
          { id: EXAMPLE_IDS.item, min_stock: 5 },
          { id: EXAMPLE_IDS.item, metadata: { colour: null } },
        ],
      },
    },
  },
  'GET /items/:id': item.retrieve(ETAG),
  'PATCH /items/:id': item.route({
    body: ItemBody,
    headers: IfMatchHeaders,
    docs: {
      operationId: 'updateItem',
      summary: 'Update an item',
      description:
        'Sets the fields given; null clears `category`, `min_stock`, `location_id`. `metadata` is a JSON Merge Patch (RFC 7396): a key set to null is removed, ' +
        '`metadata: null` clears all. A change of `location_id` writes one movement in the same transaction. Emits `item.updated`, and `item.location_changed` with a movement.',
      body: ItemPatch,
      responses: { 200: { description: 'The item.', schema: Item, headers: ETAG } },
      errors: {
        400: ITEM_FIELD_RULES,
        409: {
          description: `${SKU_TAKEN.description} Or \`If-Match\` names an older version (version conflict, \`errors[0].code: version_mismatch\`).`,
          example: SKU_TAKEN.example,
        },
      },
      requestExample: { name: 'T-shirt, navy, M', location_id: EXAMPLE_IDS.location, metadata: { colour: 'navy', season: null } },
    },
  }),
  'GET /items/:id/movements': item.route({
    query: ListQuery,
    docs: {
      operationId: 'listMovements',
      summary: "List an item's movements",
      tag: 'Items',
      responses: { 200: { description: 'One page of movements, oldest first.', schema: MovementList } },
    },
  }),
  'POST /items/:id/stock-adjustments': item.route({
    body: AdjustmentBody,
    docs: {
      operationId: 'adjustStock',
      summary: 'Adjust stock',
      tag: 'Items',
      description:
        "Adds `delta` to the on-hand stock of one level (default: the item's default location) and to the item's quantity, atomically. " +
        'Emits `item.stock_adjusted`, and `item.reorder_needed` when the quantity falls below `min_stock`.',
      responses: { 201: { description: 'The adjustment and the item after it.', schema: AdjustmentResult } },
      errors: {
        400: UNKNOWN_LOCATION,
        409: {
          description:
            "The level's on-hand stock would fall below its reserved stock (`errors[0].code: insufficient_stock`), or the quantity would exceed 2147483647 (`too_large`).",
          example: INSUFFICIENT_STOCK('delta', 'Insufficient stock: 2 available at the level, the adjustment takes 3.').example,
        },
      },
      requestExample: { location_id: EXAMPLE_IDS.location, delta: -2, reason: 'sale', note: 'Order 1042' },
    },
  }),
  'GET /items/:id/stock': item.route({
    docs: {
      operationId: 'getItemStock',
      summary: "Retrieve an item's stock per location",
      tag: 'Stock',
      description:
        'The levels whose `on_hand` or `reserved` is not 0, the unassigned level (`location_id: null`) first, then by `location_id`; `quantity` is the sum of their `on_hand`. ' +
        'Reservations past their `expires_at` are not counted in `reserved`.',
      responses: { 200: { description: "The item's quantity and levels.", schema: ItemStock } },
    },
  }),
  'GET /locations/:id/stock': location.route({
    query: ListQuery,
    docs: {
      operationId: 'listLocationStock',
      summary: 'List the stock at a location',
      tag: 'Stock',
      description: 'The items with a non-zero level at the location, by `sku` (Unicode code point order).',
      responses: { 200: { description: 'One page of levels, by sku.', schema: LocationStockList } },
    },
  }),
  'POST /items/:id/transfers': item.route({
    body: TransferBody,
    docs: {
      operationId: 'transferStock',
      summary: 'Transfer stock between locations',
      tag: 'Stock',
      description:
        'Moves `quantity` from one level of the item to another in one transaction: one movement (`reason: "transfer"`), the item\'s quantity unchanged. ' +
        'Emits `item.stock_transferred`.',
      responses: { 201: { description: 'The transfer and the item.', schema: TransferResult } },
      errors: {
        400: `${UNKNOWN_LOCATION} The same location on both ends: \`same_location\` on \`to_location_id\`.`,
        409: INSUFFICIENT_STOCK('quantity', 'Insufficient stock: 2 available at the level, the transfer takes 5.'),
      },
      requestExample: { from_location_id: EXAMPLE_IDS.location, to_location_id: null, quantity: 5, note: 'Back to no location' },
    },
  }),
  'POST /items/:id/reservations': item.route({
    body: ReservationBody,
    docs: {
      operationId: 'createReservation',
      summary: 'Reserve stock',
      tag: 'Reservations',
      description:
        "Holds `quantity` of one level (default: the item's default location) until it is committed, released or expires (`expires_in_seconds`, default 900). " +
        'No level is ever oversold, under any concurrency. Emits `reservation.created`.',
      responses: { 201: { description: 'The reservation, `active`.', schema: Reservation } },
      errors: {
        400: UNKNOWN_LOCATION,
        409: orLimitExceeded(
          INSUFFICIENT_STOCK('quantity', 'Insufficient stock: 2 available at the level, the reservation takes 3.'),
          'active_reservations',
          'reservations active (not committed, released or past their `expires_at`)',
        ),
      },
      requestExample: { location_id: EXAMPLE_IDS.location, quantity: 3, expires_in_seconds: 900, reference: 'Order 1042' },
    },
  }),
  'GET /items/:id/reservations': item.route({
    query: ListReservationsQuery,
    docs: {
      operationId: 'listReservations',
      summary: "List an item's reservations",
      tag: 'Reservations',
      responses: { 200: { description: 'One page of reservations, oldest first.', schema: ReservationList } },
    },
  }),
  'GET /reservations/:id': reservation.retrieve(),
  'POST /reservations/:id/commit': reservation.route({
    body: NoBody,
    docs: {
      operationId: 'commitReservation',
      summary: 'Commit a reservation',
      description:
        'The reserved stock leaves its level (`on_hand` and `reserved` both fall by `quantity`) as one stock adjustment (`reason: "sale"`). ' +
        'Emits `item.stock_adjusted` (and `item.reorder_needed` when the quantity falls below `min_stock`) and `reservation.committed`.',
      responses: { 200: { description: 'The reservation, `committed`, the adjustment and the item after it.', schema: CommitResult } },
      errors: { 409: RESERVATION_NOT_ACTIVE('committed') },
    },
  }),
  'POST /reservations/:id/release': reservation.route({
    body: NoBody,
    docs: {
      operationId: 'releaseReservation',
      summary: 'Release a reservation',
      description: 'The reserved stock is available again. Emits `reservation.released`.',
      responses: { 200: { description: 'The reservation, `released`.', schema: Reservation } },
      errors: { 409: RESERVATION_NOT_ACTIVE('released') },
    },
  }),
} satisfies Record<RoutesOf<'warehouse'>, RouteDeclaration>;

/** The warehouse service's route declarations wired to handlers with the store; handlers call the services. */
export function warehouseRouteDefinitions(
  store: WarehouseStore,
  webhooks: Record<WebhookRouteKey, RouteDefinition>,
  limits: WarehouseLimits,
  logger?: Logger,
): Record<RoutesOf<'warehouse'>, RouteDefinition> {
  return {
    ...webhooks,
    'POST /locations': route(warehouseRouteDeclarations['POST /locations'], async ({ identity, body }) => ({
      status: 201,
      body: renderLocation(await createLocation(store, identity.workspaceId, body, limits.locations)),
    })),

    'GET /locations': route(warehouseRouteDeclarations['GET /locations'], async ({ identity, query }) => {
      return { status: 200, body: await pageOf(query, (page) => store.listLocations(identity.workspaceId, page), renderLocation) };
    }),

    'POST /items': route(warehouseRouteDeclarations['POST /items'], async ({ identity, body }) =>
      itemReply(201, await createItem(store, identity.workspaceId, body, limits.items)),
    ),

    'GET /items': route(warehouseRouteDeclarations['GET /items'], async ({ identity, query }) => {
      return {
        status: 200,
        body: await pageOf(query, (page) => store.listItems(identity.workspaceId, { sku: query.sku, category: query.category, ...page }), renderItem),
      };
    }),

    'POST /items/bulk': route(warehouseRouteDeclarations['POST /items/bulk'], async ({ identity, body }) => ({
      status: 200,
      body: { results: await updateItems(store, identity.workspaceId, body.items, logger) } satisfies BulkAnswer,
    })),

    'GET /items/:id': route(warehouseRouteDeclarations['GET /items/:id'], async ({ identity, params }) =>
      itemReply(200, await getItem(store, identity.workspaceId, params.id)),
    ),

    'PATCH /items/:id': route(warehouseRouteDeclarations['PATCH /items/:id'], async ({ identity, params, body, headers }) =>
      itemReply(200, await updateItem(store, identity.workspaceId, params.id, body, headers['if-match'])),
    ),

    'GET /items/:id/movements': route(warehouseRouteDeclarations['GET /items/:id/movements'], async ({ identity, params, query }) => {
      return { status: 200, body: await pageOf(query, (page) => listMovements(store, identity.workspaceId, params.id, page), renderMovement) };
    }),

    'POST /items/:id/stock-adjustments': route(warehouseRouteDeclarations['POST /items/:id/stock-adjustments'], async ({ identity, params, body }) => {
      const { adjustment, item } = await adjustStock(store, identity.workspaceId, params.id, {
        locationId: body.location_id,
        delta: body.delta,
        reason: body.reason,
        note: body.note ?? null,
      });
      return { status: 201, body: { adjustment: renderAdjustment(adjustment), item: renderItem(item) } satisfies AdjustmentResult };
    }),

    'GET /items/:id/stock': route(warehouseRouteDeclarations['GET /items/:id/stock'], async ({ identity, params }) => {
      const { item, levels } = await itemStock(store, identity.workspaceId, params.id);
      return { status: 200, body: renderItemStock(item, levels) };
    }),

    'GET /locations/:id/stock': route(warehouseRouteDeclarations['GET /locations/:id/stock'], async ({ identity, params, query }) => {
      const page = (after: Parameters<typeof locationStock>[3]) => locationStock(store, identity.workspaceId, params.id, after);
      // The cursor names the page's last item (its level's creation time rides along, unused): the next page starts after its sku.
      return { status: 200, body: await pageOf(query, page, renderLocationStock, (row) => ({ createdAt: row.createdAt, id: row.itemId })) };
    }),

    'POST /items/:id/transfers': route(warehouseRouteDeclarations['POST /items/:id/transfers'], async ({ identity, params, body }) => {
      const { transfer, item } = await transferStock(store, identity.workspaceId, params.id, {
        fromLocationId: body.from_location_id,
        toLocationId: body.to_location_id,
        quantity: body.quantity,
        note: body.note ?? null,
      });
      return { status: 201, body: { transfer: renderTransfer(transfer), item: renderItem(item) } satisfies TransferResult };
    }),

    'POST /items/:id/reservations': route(warehouseRouteDeclarations['POST /items/:id/reservations'], async ({ identity, params, body }) => {
      const created = await createReservation(
        store,
        identity.workspaceId,
        params.id,
        {
          locationId: body.location_id,
          quantity: body.quantity,
          expiresInSeconds: body.expires_in_seconds,
          reference: body.reference ?? null,
        },
        limits.active_reservations,
      );
      return { status: 201, body: renderReservation(created) };
    }),

    'GET /items/:id/reservations': route(warehouseRouteDeclarations['GET /items/:id/reservations'], async ({ identity, params, query }) => {
      const page = (after: { after?: Cursor; take: number }) => listReservations(store, identity.workspaceId, params.id, { status: query.status, ...after });
      return { status: 200, body: await pageOf(query, page, renderReservation) };
    }),

    'GET /reservations/:id': route(warehouseRouteDeclarations['GET /reservations/:id'], async ({ identity, params }) => ({
      status: 200,
      body: renderReservation(await getReservation(store, identity.workspaceId, params.id)),
    })),

    'POST /reservations/:id/commit': route(warehouseRouteDeclarations['POST /reservations/:id/commit'], async ({ identity, params }) => {
      const { reservation: committed, adjustment, item } = await commitReservation(store, identity.workspaceId, params.id);
      return {
        status: 200,
        body: { reservation: renderReservation(committed), adjustment: renderAdjustment(adjustment), item: renderItem(item) } satisfies CommitResult,
      };
    }),

    'POST /reservations/:id/release': route(warehouseRouteDeclarations['POST /reservations/:id/release'], async ({ identity, params }) => ({
      status: 200,
      body: renderReservation(await releaseReservation(store, identity.workspaceId, params.id)),
    })),
  };
}
