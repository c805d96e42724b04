import { openApiDocument, type OpenApiDocument } from '@platform/core';
import { WEBHOOK_ENDPOINTS_TAG } from '@platform/webhooks';
import { Adjustment, Item, Movement, Reservation, Transfer } from './warehouse.resources';
import { warehouseRouteDeclarations } from './warehouse.routes';

/** The warehouse API's OpenAPI 3.1 document, from the route declarations the app mounts: no database or queue needed. */
export function warehouseApiDocument(): OpenApiDocument {
  return openApiDocument({
    service: 'warehouse',
    title: 'Warehouse API',
    version: '1.7',
    description: 'Locations, items with their stock per location, stock adjustments, transfers and reservations, and the movements of stock between locations.',
    routes: warehouseRouteDeclarations,
    tags: [
      { name: 'Locations', description: 'Where items are stored.' },
      { name: 'Items', description: 'Items, their stock adjustments and movements; `If-Match` guards concurrent updates.' },
      { name: 'Stock', description: 'Stock per location (levels), and transfers between them; at every level `on_hand >= reserved >= 0`.' },
      {
        name: 'Reservations',
        description: 'Stock held for an order not yet shipped: committed (it leaves as a sale), released, or expired at `expires_at`.',
      },
      WEBHOOK_ENDPOINTS_TAG,
    ],
    webhooks: {
      'item.created': { summary: 'An item was created', data: Item },
      'item.updated': { summary: 'An item was updated (PATCH or a bulk entry)', data: Item },
      'item.location_changed': { summary: "An item's default location changed", data: Movement },
      'item.stock_adjusted': { summary: 'Stock was adjusted', data: Adjustment },
      'item.reorder_needed': { summary: 'The quantity fell below min_stock', data: Item },
      'item.stock_transferred': { summary: 'Stock was transferred between locations', data: Transfer },
      'reservation.created': { summary: 'Stock was reserved', data: Reservation },
      'reservation.committed': { summary: 'A reservation was committed (its stock left as a sale)', data: Reservation },
      'reservation.released': { summary: 'A reservation was released', data: Reservation },
      'reservation.expired': { summary: 'A reservation expired (within 60 s of its expires_at)', data: Reservation },
    },
  });
}
