import { adminOpenApiDocument, type OpenApiDocument } from '@platform/core';
import { ADMIN_ROUTE_SCHEMAS } from './admin.schemas';

/** The admin API's OpenAPI 3.1 document, from the route declarations the gateway mounts: no database needed. */
export function adminApiDocument(): OpenApiDocument {
  return adminOpenApiDocument({
    title: 'Admin API',
    version: '1',
    description:
      "The workspace settings: workspaces, their API keys (create, list, change, roll, revoke, usage) and their quotas. For the platform's operators, not its tenants.",
    routes: ADMIN_ROUTE_SCHEMAS,
    tags: [
      { name: 'Workspaces', description: 'Tenants of the platform.' },
      { name: 'API keys', description: "A workspace's keys: their scopes, limits, expiry and usage." },
      { name: 'Quotas', description: 'What a workspace may keep: pipelines, scheduled pipelines, webhook endpoints per service, stored idempotent answers.' },
    ],
  });
}
