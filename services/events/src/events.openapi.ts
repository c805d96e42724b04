import { openApiDocument, type OpenApiDocument } from '@platform/core';
import { WEBHOOK_ENDPOINTS_TAG } from '@platform/webhooks';
import { Ticket, UnvalidatedTicket } from './events.resources';
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
      {
        name: 'Check-in',
        description:
          'Check-in as real gates need it: offline scanners download the ticket list (then only its changes, `updated_since`), scan locally and upload ' +
          'their scans; a mistaken validation is undone with a reason; every attempt is kept; live figures per gate.',
      },
      WEBHOOK_ENDPOINTS_TAG,
    ],
    webhooks: {
      'ticket.validated': { summary: 'A ticket was validated', data: Ticket },
      'ticket.unvalidated': { summary: 'A validation was undone', data: UnvalidatedTicket },
    },
  });
}
