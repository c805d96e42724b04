import { openApiDocument, type OpenApiDocument } from '@platform/core';
import { WEBHOOK_ENDPOINTS_TAG } from '@platform/webhooks';
import { Adjustment, Item, Movement } from './warehouse.resources';
import { warehouseRouteDeclarations } from './warehouse.routes';

/** The warehouse API's OpenAPI 3.1 document, from the route declarations the app mounts: no database or queue needed. */
export function warehouseApiDocument(): OpenApiDocument {
  return openApiDocument({
    service: 'warehouse',
    title: 'Warehouse API',
    version: '1.7',
    description: 'Locations, items with their on-hand stock, stock adjustments and the movements of items between locations.',
    routes: warehouseRouteDeclarations,
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
