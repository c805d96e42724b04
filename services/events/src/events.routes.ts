import { z } from 'zod';
import {
  codePointString,
  ListQuery,
  pageOf,
  resource,
  route,
  type RouteDeclaration,
  type RouteDefinition,
  type RoutesOf,
  Slug,
  stringMap,
  Timestamp,
  Uuid,
  type WebhookRouteKey,
} from '@platform/core';
import { webhookRouteDeclarations } from '@platform/webhooks';
import { ALREADY_VALIDATED_EXAMPLE, Event, EXAMPLE_IDS, Ticket, TicketList, TicketStatus, Validation } from './events.resources';
import type { EventsStore } from './events.store';
import { createEvent, getEvent, getTicket, issueTicket, renderEvent, renderTicket, renderValidation, validateTicket } from './events.service';

const IdParams = z.object({ id: Uuid });

export const CreateEventBody = z.strictObject({
  name: codePointString(1, 200),
  starts_at: Timestamp.meta({ description: 'RFC 3339 with an offset; answered in UTC.' }),
  ends_at: Timestamp.nullable().optional().meta({ description: 'Not before `starts_at`.' }),
});

/** Ticket metadata follows the rules of item metadata (contract section 8); every key is kept as sent. */
export const TicketMetadata = stringMap(codePointString(0, 500), { keyLength: { min: 1, max: 500 }, maxKeys: 20 }).meta({
  description: 'At most 20 keys of 1-500 characters; values of at most 500 characters.',
});

export const IssueTicketBody = z.strictObject({
  holder_name: codePointString(1, 200).nullable().optional(),
  metadata: TicketMetadata.optional(),
});

export const ListTicketsQuery = ListQuery.extend({ status: TicketStatus.optional().meta({ description: 'Only tickets in this status.' }) });

export const ValidateTicketBody = z.strictObject({
  gate: Slug.pipe(codePointString(1, 64)).nullable().optional().meta({ description: 'The entrance, a slug such as `north-1`.' }),
  validator_id: Uuid.nullable().optional().meta({ description: 'Who or what scanned the ticket.' }),
  event_id: Uuid.nullable().optional().meta({ description: 'The event whose entrance scans; a ticket of another event is refused with 400 `wrong_event`.' }),
});

const event = resource({ name: 'event', params: IdParams, schema: Event });
const ticket = resource({ name: 'ticket', params: IdParams, schema: Ticket });

/** What each route of the events service takes and answers (no handlers): the definitions below validate it, the OpenAPI document describes it. */
export const eventsRouteDeclarations = {
  ...webhookRouteDeclarations,
  'POST /events': {
    body: CreateEventBody,
    docs: {
      operationId: 'createEvent',
      summary: 'Create an event',
      responses: { 201: { description: 'The event.', schema: Event } },
      errors: { 400: '`ends_at` before `starts_at` (`errors[0].code: invalid_range`).' },
      requestExample: { name: 'Open Air 2025', starts_at: '2025-06-01T20:00:00+02:00', ends_at: '2025-06-02T01:00:00+02:00' },
    },
  },
  'GET /events/:id': event.retrieve(),
  'POST /events/:id/tickets': event.route({
    body: IssueTicketBody,
    docs: {
      operationId: 'issueTicket',
      summary: 'Issue a ticket',
      tag: 'Tickets',
      responses: { 201: { description: 'The ticket, `issued`.', schema: Ticket } },
      requestExample: { holder_name: 'Ada Lovelace', metadata: { seat: 'A-12' } },
    },
  }),
  'GET /events/:id/tickets': event.route({
    query: ListTicketsQuery,
    docs: {
      operationId: 'listTickets',
      summary: "List an event's tickets",
      tag: 'Tickets',
      responses: { 200: { description: 'One page of tickets, oldest first.', schema: TicketList } },
    },
  }),
  'GET /tickets/:id': ticket.retrieve(),
  'POST /tickets/:id/validate': ticket.route({
    body: ValidateTicketBody,
    docs: {
      operationId: 'validateTicket',
      summary: 'Validate a ticket',
      description:
        'Validates a ticket at the entrance, exactly once: under any number of concurrent calls one gets 200, the others 409 with the original validation. ' +
        'Send an `Idempotency-Key` so that a scanner retrying a lost answer gets the original 200 again. Emits `ticket.validated`.',
      responses: { 200: { description: 'The ticket is now validated.', schema: Validation } },
      errors: {
        400: '`event_id` names another event than the ticket\'s, or no event (`errors[0] = { in: "body", field: "event_id", code: "wrong_event" }`).',
        409: {
          description: 'The ticket was already validated: `ticket_id`, `validated_at`, `validator_id` and `gate` of the original validation sit beside `code`.',
          example: ALREADY_VALIDATED_EXAMPLE,
        },
      },
      requestExample: { gate: 'north-1', validator_id: EXAMPLE_IDS.validator, event_id: EXAMPLE_IDS.event },
    },
  }),
} satisfies Record<RoutesOf<'events'>, RouteDeclaration>;

/** The events service's route declarations wired to handlers with the store; handlers call events.service. */
export function eventsRouteDefinitions(store: EventsStore, webhooks: Record<WebhookRouteKey, RouteDefinition>): Record<RoutesOf<'events'>, RouteDefinition> {
  return {
    ...webhooks,
    'POST /events': route(eventsRouteDeclarations['POST /events'], async ({ identity, body }) => {
      const event = await createEvent(store, identity.workspaceId, { name: body.name, startsAt: body.starts_at, endsAt: body.ends_at ?? null });
      return { status: 201, body: renderEvent(event) };
    }),

    'GET /events/:id': route(eventsRouteDeclarations['GET /events/:id'], async ({ identity, params }) => ({
      status: 200,
      body: renderEvent(await getEvent(store, identity.workspaceId, params.id)),
    })),

    'POST /events/:id/tickets': route(eventsRouteDeclarations['POST /events/:id/tickets'], async ({ identity, params, body }) => {
      const ticket = await issueTicket(store, identity.workspaceId, params.id, { holderName: body.holder_name ?? null, metadata: body.metadata ?? {} });
      return { status: 201, body: renderTicket(ticket) };
    }),

    'GET /events/:id/tickets': route(eventsRouteDeclarations['GET /events/:id/tickets'], async ({ identity, params, query }) => {
      await getEvent(store, identity.workspaceId, params.id);
      return {
        status: 200,
        body: await pageOf(query, (page) => store.listTickets(identity.workspaceId, params.id, { status: query.status, ...page }), renderTicket),
      };
    }),

    'GET /tickets/:id': route(eventsRouteDeclarations['GET /tickets/:id'], async ({ identity, params }) => ({
      status: 200,
      body: renderTicket(await getTicket(store, identity.workspaceId, params.id)),
    })),

    'POST /tickets/:id/validate': route(eventsRouteDeclarations['POST /tickets/:id/validate'], async ({ identity, params, body }) => {
      const ticket = await validateTicket(store, identity.workspaceId, params.id, {
        eventId: body.event_id ?? null,
        gate: body.gate ?? null,
        validatorId: body.validator_id ?? null,
      });
      return { status: 200, body: renderValidation(ticket) };
    }),
  };
}
