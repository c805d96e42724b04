import { documentationOnly, openApiDocument, type OpenApiDocument, type RouteDefinition, type RoutesOf } from '@platform/core';
import { webhookRoutes, type Sql, WEBHOOK_ENDPOINTS_TAG } from '@platform/webhooks';
import { Ticket } from './events.resources';
import { eventsRouteDefinitions } from './events.routes';
import { eventsStore, type EventsStore } from './events.store';
import type { Database } from './database';

/** Route definitions for documenting only: no database behind them. */
function documentedDefinitions(): Record<RoutesOf<'events'>, RouteDefinition> {
  return eventsRouteDefinitions(
    eventsStore(documentationOnly<Database>('events database')) satisfies EventsStore,
    webhookRoutes({ sql: documentationOnly<Sql>('webhooks database'), allowPrivate: false }),
  );
}

/** The events API's OpenAPI 3.1 document, from the route definitions the app mounts (default: built without a database). */
export function eventsApiDocument(definitions: Record<RoutesOf<'events'>, RouteDefinition> = documentedDefinitions()): OpenApiDocument {
  return openApiDocument({
    service: 'events',
    title: 'Events API',
    version: '0 (beta)',
    description: 'Events, their tickets, and validation of tickets at the entrance. Beta: the API may still change.',
    definitions,
    tags: [
      { name: 'Events', description: 'Events that tickets are issued for.' },
      { name: 'Tickets', description: 'Tickets of an event and their validation at the entrance.' },
      WEBHOOK_ENDPOINTS_TAG,
    ],
    webhooks: { 'ticket.validated': { summary: 'A ticket was validated', data: Ticket } },
  });
}
