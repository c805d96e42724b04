// The platform's four real documents, built by the functions the services and the gateway serve
// them from (no service runs), as the page receives them: JSON, with the tab each is shown in.
import { adminApiDocument } from '@platform/admin-api';
import { ADMIN_PREFIX, SERVICES } from '@platform/contract';
import { eventsApiDocument } from '@platform/events/dist/events.openapi.js';
import { pipelinesApiDocument } from '@platform/pipelines/dist/pipelines.openapi.js';
import { warehouseApiDocument } from '@platform/warehouse/dist/warehouse.openapi.js';
import type { Service } from '../navigation.js';
import type { OpenApiDocument } from '../openapi.js';

export const PLATFORM_DOCUMENTS: readonly { service: Service; doc: () => unknown }[] = [
  { service: { name: 'events', prefix: SERVICES.events.prefix, document: '/docs/events.json' }, doc: eventsApiDocument },
  { service: { name: 'warehouse', prefix: SERVICES.warehouse.prefix, document: '/docs/warehouse.json' }, doc: warehouseApiDocument },
  { service: { name: 'pipelines', prefix: SERVICES.pipelines.prefix, document: '/docs/pipelines.json' }, doc: () => pipelinesApiDocument() },
  { service: { name: 'admin', prefix: ADMIN_PREFIX, document: '/docs/admin.json' }, doc: adminApiDocument },
];

/** Each tab's service and its document as JSON. */
export function platformDocuments(): { service: Service; doc: OpenApiDocument }[] {
  return PLATFORM_DOCUMENTS.map(({ service, doc }) => ({ service, doc: JSON.parse(JSON.stringify(doc())) as OpenApiDocument }));
}
