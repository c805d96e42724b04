import { documentationOnly, openApiDocument, type OpenApiDocument, type RouteDefinition, type RoutesOf } from '@platform/core';
import { webhookRoutes, type Sql, WEBHOOK_ENDPOINTS_TAG } from '@platform/webhooks';
import type { Database } from './database';
import { Adjustment, Item, Movement } from './warehouse.resources';
import { warehouseRouteDefinitions } from './warehouse.routes';
import { warehouseStore } from './warehouse.store';

/** Route definitions for documenting only: no database behind them. */
function documentedDefinitions(): Record<RoutesOf<'warehouse'>, RouteDefinition> {
  return warehouseRouteDefinitions(
    warehouseStore(documentationOnly<Database>('warehouse database')),
    webhookRoutes({ sql: documentationOnly<Sql>('webhooks database'), allowPrivate: false }),
  );
}

/** The warehouse API's OpenAPI 3.1 document, from the route definitions the app mounts (default: built without a database). */
export function warehouseApiDocument(definitions: Record<RoutesOf<'warehouse'>, RouteDefinition> = documentedDefinitions()): OpenApiDocument {
  return openApiDocument({
    service: 'warehouse',
    title: 'Warehouse API',
    version: '1.7',
    description: 'Locations, items with their on-hand stock, stock adjustments and the movements of items between locations.',
    definitions,
    tags: [
      { name: 'Locations', description: 'Where items are stored.' },
      { name: 'Items', description: 'Items, their stock adjustments and movements; `If-Match` guards concurrent updates.' },
      WEBHOOK_ENDPOINTS_TAG,
    ],
    webhooks: {
      'item.created': { summary: 'An item was created', data: Item },
      'item.updated': { summary: 'An item was updated (PATCH or a bulk entry)', data: Item },
      'item.location_changed': { summary: "An item's default location changed", data: Movement },
      'item.stock_adjusted': { summary: 'Stock was adjusted', data: Adjustment },
      'item.reorder_needed': { summary: 'The quantity fell below min_stock', data: Item },
    },
  });
}
