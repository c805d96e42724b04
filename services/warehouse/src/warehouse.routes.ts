import { z } from 'zod';
import {
  codePointString,
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
import { INT4_MAX, ItemPatch, itemEtag, NewItem, parseIfMatch, Sku, type IfMatch } from './item-input';
import { createItem, getItem, listMovements, renderItem, renderMovement, updateItem, updateItems } from './items.service';
import { createLocation, renderLocation } from './locations.service';
import { adjustStock, renderAdjustment } from './stock.service';
import { AdjustmentResult, BulkAnswer, EXAMPLE_IDS, Item, ItemList, Location, LocationList, MovementList } from './warehouse.resources';
import { AdjustmentReason, type Item as ItemRow, type WarehouseStore } from './warehouse.store';

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

export const AdjustmentBody = z.strictObject({
  delta: z
    .int()
    .min(-INT4_MAX, `must be at least ${-INT4_MAX}`)
    .max(INT4_MAX, `must be at most ${INT4_MAX}`)
    .refine((delta) => delta !== 0, { message: 'must be a non-zero integer', params: { code: 'invalid_value' } })
    .meta({ description: 'Added to the on-hand quantity; not 0.', not: { const: 0 } }),
  reason: z.enum(AdjustmentReason),
  note: codePointString(1, 500).nullable().optional(),
});

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
        409: {
          description: 'The `code` is already used by another location of the workspace (`errors[0] = { field: "code", code: "taken" }`).',
          example: {
            code: 'conflict',
            message: 'The location code is already taken.',
            errors: [{ in: 'body', field: 'code', code: 'taken', message: 'is already used by another location of this workspace' }],
          },
        },
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
      errors: { 400: ITEM_FIELD_RULES, 409: SKU_TAKEN },
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
        'Adds `delta` to the on-hand quantity atomically. Emits `item.stock_adjusted`, and `item.reorder_needed` when the quantity falls below `min_stock`.',
      responses: { 201: { description: 'The adjustment and the item after it.', schema: AdjustmentResult } },
      errors: {
        409: {
          description: 'The quantity would fall below 0 (`errors[0].code: insufficient_stock`) or exceed 2147483647 (`too_large`).',
          example: {
            code: 'conflict',
            message: 'Insufficient stock: 1 on hand, the adjustment removes 2.',
            errors: [{ in: 'body', field: 'delta', code: 'insufficient_stock', message: 'would take the quantity below 0' }],
          },
        },
      },
      requestExample: { delta: -2, reason: 'sale', note: 'Order 1042' },
    },
  }),
} satisfies Record<RoutesOf<'warehouse'>, RouteDeclaration>;

/** The warehouse service's route declarations wired to handlers with the store; handlers call the services. */
export function warehouseRouteDefinitions(
  store: WarehouseStore,
  webhooks: Record<WebhookRouteKey, RouteDefinition>,
  logger?: Logger,
): Record<RoutesOf<'warehouse'>, RouteDefinition> {
  return {
    ...webhooks,
    'POST /locations': route(warehouseRouteDeclarations['POST /locations'], async ({ identity, body }) => ({
      status: 201,
      body: renderLocation(await createLocation(store, identity.workspaceId, body)),
    })),

    'GET /locations': route(warehouseRouteDeclarations['GET /locations'], async ({ identity, query }) => {
      return { status: 200, body: await pageOf(query, (page) => store.listLocations(identity.workspaceId, page), renderLocation) };
    }),

    'POST /items': route(warehouseRouteDeclarations['POST /items'], async ({ identity, body }) =>
      itemReply(201, await createItem(store, identity.workspaceId, body)),
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
        delta: body.delta,
        reason: body.reason,
        note: body.note ?? null,
      });
      return { status: 201, body: { adjustment: renderAdjustment(adjustment), item: renderItem(item) } satisfies AdjustmentResult };
    }),
  };
}
