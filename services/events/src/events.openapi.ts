import { openApiDocument, type OpenApiDocument } from '@platform/core';
import { WEBHOOK_ENDPOINTS_TAG } from '@platform/webhooks';
import { Ticket } from './events.resources';
import { eventsRouteDeclarations } from './events.routes';

/** The events API's OpenAPI 3.1 document, from the route declarations the app mounts: no database or queue needed. */
export function eventsApiDocument(): OpenApiDocument {
  return openApiDocument({
    service: 'events',
    title: 'Events API',
    version: '0 (beta)',
    description: 'Events, their tickets, and validation of tickets at the entrance. Beta: the API may still change.',
    routes: eventsRouteDeclarations,
    tags: [
      { name: 'Events', description: 'Events that tickets are issued for.' },
      { name: 'Tickets', description: 'Tickets of an event and their validation at the entrance.' },
      WEBHOOK_ENDPOINTS_TAG,
    ],
    webhooks: { 'ticket.validated': { summary: 'A ticket was validated', data: Ticket } },
  });
}
