import { z } from 'zod';
import {
  codePointString,
  contractRouter,
  decodeCursor,
  listPage,
  ListQuery,
  route,
  Slug,
  Uuid,
  type RouteDefinition,
  type WebhookRouteKey,
} from '@platform/core';
import type { Router } from 'express';
import { INT4_MAX, itemEtag, parseIfMatch, Sku, type IfMatch } from './item-input';
import { createItem, getItem, listMovements, renderItem, renderMovement, updateItem, updateItems } from './items.service';
import { createLocation, renderLocation } from './locations.service';
import { adjustStock, renderAdjustment } from './stock.service';
import { AdjustmentReason, type Item, type WarehouseStore } from './warehouse.store';

const IdParams = z.object({ id: Uuid });

export const CreateLocationBody = z.strictObject({
  name: codePointString(1, 200),
  code: z.string().regex(/^[A-Za-z0-9._-]+$/, 'must be letters, digits, ".", "_" or "-"').pipe(codePointString(1, 64)),
});

/**
 * Item bodies are any JSON object here: items.service parses them together with the checks that
 * need the database (location of the workspace, merged metadata), so one 400 lists every problem,
 * and a bulk entry is judged exactly like a PATCH of its own.
 */
const ItemBody = z.record(z.string(), z.unknown());

export const BulkBody = z.strictObject({
  items: z.array(z.record(z.string(), z.unknown())).min(1, 'must have at least 1 item').max(100, 'must have at most 100 items'),
});

/** A filter sent empty (`?sku=&category=`, as the contract writes the route) filters nothing. */
function filter<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => (value === '' ? undefined : value), schema.optional());
}

export const ListItemsQuery = ListQuery.extend({ sku: filter(Sku), category: filter(Slug) });

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
    .optional(),
});

export const AdjustmentBody = z.strictObject({
  delta: z
    .int()
    .min(-INT4_MAX, `must be at least ${-INT4_MAX}`)
    .max(INT4_MAX, `must be at most ${INT4_MAX}`)
    .refine((delta) => delta !== 0, { message: 'must be a non-zero integer', params: { code: 'invalid_value' } }),
  reason: z.enum(AdjustmentReason),
  note: codePointString(1, 500).nullable().optional(),
});

function itemReply(status: number, item: Item) {
  return { status, body: renderItem(item), headers: { etag: itemEtag(item.version) } };
}

export function warehouseRoutes(store: WarehouseStore, webhooks: Record<WebhookRouteKey, RouteDefinition>): Router {
  return contractRouter('warehouse', {
    ...webhooks,
    'POST /locations': route({ body: CreateLocationBody }, async ({ identity, body }) => ({
      status: 201,
      body: renderLocation(await createLocation(store, identity.workspaceId, body)),
    })),

    'GET /locations': route({ query: ListQuery }, async ({ identity, query }) => {
      const rows = await store.listLocations(identity.workspaceId, { after: decodeCursor(query.cursor), take: query.limit + 1 });
      return { status: 200, body: listPage(rows, query.limit, renderLocation) };
    }),

    'POST /items': route({ body: ItemBody }, async ({ identity, body }) => itemReply(201, await createItem(store, identity.workspaceId, body))),

    'GET /items': route({ query: ListItemsQuery }, async ({ identity, query }) => {
      const rows = await store.listItems(identity.workspaceId, {
        sku: query.sku,
        category: query.category,
        after: decodeCursor(query.cursor),
        take: query.limit + 1,
      });
      return { status: 200, body: listPage(rows, query.limit, renderItem) };
    }),

    'POST /items/bulk': route({ body: BulkBody }, async ({ identity, body }) => ({
      status: 200,
      body: { results: await updateItems(store, identity.workspaceId, body.items) },
    })),

    'GET /items/:id': route({ params: IdParams }, async ({ identity, params }) => itemReply(200, await getItem(store, identity.workspaceId, params.id))),

    'PATCH /items/:id': route({ params: IdParams, body: ItemBody, headers: IfMatchHeaders }, async ({ identity, params, body, headers }) =>
      itemReply(200, await updateItem(store, identity.workspaceId, params.id, body, headers['if-match'])),
    ),

    'GET /items/:id/movements': route({ params: IdParams, query: ListQuery }, async ({ identity, params, query }) => {
      const rows = await listMovements(store, identity.workspaceId, params.id, { after: decodeCursor(query.cursor), take: query.limit + 1 });
      return { status: 200, body: listPage(rows, query.limit, renderMovement) };
    }),

    'POST /items/:id/stock-adjustments': route({ params: IdParams, body: AdjustmentBody }, async ({ identity, params, body }) => {
      const { adjustment, item } = await adjustStock(store, identity.workspaceId, params.id, { delta: body.delta, reason: body.reason, note: body.note ?? null });
      return { status: 201, body: { adjustment: renderAdjustment(adjustment), item: renderItem(item) } };
    }),
  });
}
