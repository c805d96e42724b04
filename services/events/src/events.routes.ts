import { z } from 'zod';
import {
  codePointString,
  contractRouter,
  decodeCursor,
  listPage,
  ListQuery,
  route,
  Slug,
  Timestamp,
  Uuid,
  type RouteDefinition,
  type WebhookRouteKey,
} from '@platform/core';
import type { Router } from 'express';
import type { EventsStore } from './events.store';
import {
  createEvent,
  getEvent,
  getTicket,
  issueTicket,
  renderEvent,
  renderTicket,
  renderValidation,
  validateTicket,
} from './events.service';

const IdParams = z.object({ id: Uuid });

export const CreateEventBody = z.strictObject({
  name: codePointString(1, 200),
  starts_at: Timestamp,
  ends_at: Timestamp.nullable().optional(),
});

export const TicketMetadata = z
  .record(z.string(), codePointString(0, 500))
  .refine((m) => Object.keys(m).length <= 20, { message: 'must have at most 20 keys', params: { code: 'too_many_keys' } });

export const IssueTicketBody = z.strictObject({
  holder_name: codePointString(1, 200).nullable().optional(),
  metadata: TicketMetadata.optional(),
});

export const ListTicketsQuery = ListQuery.extend({ status: z.enum(['issued', 'validated']).optional() });

export const ValidateTicketBody = z.strictObject({
  gate: Slug.pipe(codePointString(1, 64)).nullable().optional(),
  validator_id: Uuid.nullable().optional(),
  event_id: Uuid.nullable().optional(),
});

export function eventsRoutes(store: EventsStore, webhooks: Record<WebhookRouteKey, RouteDefinition>): Router {
  return contractRouter('events', {
    ...webhooks,
    'POST /events': route({ body: CreateEventBody }, async ({ identity, body }) => {
      const event = await createEvent(store, identity.workspaceId, { name: body.name, startsAt: body.starts_at, endsAt: body.ends_at ?? null });
      return { status: 201, body: renderEvent(event) };
    }),

    'GET /events/:id': route({ params: IdParams }, async ({ identity, params }) => ({
      status: 200,
      body: renderEvent(await getEvent(store, identity.workspaceId, params.id)),
    })),

    'POST /events/:id/tickets': route({ params: IdParams, body: IssueTicketBody }, async ({ identity, params, body }) => {
      const ticket = await issueTicket(store, identity.workspaceId, params.id, { holderName: body.holder_name ?? null, metadata: body.metadata ?? {} });
      return { status: 201, body: renderTicket(ticket) };
    }),

    'GET /events/:id/tickets': route({ params: IdParams, query: ListTicketsQuery }, async ({ identity, params, query }) => {
      await getEvent(store, identity.workspaceId, params.id);
      const rows = await store.listTickets(identity.workspaceId, params.id, {
        status: query.status,
        after: decodeCursor(query.cursor),
        take: query.limit + 1,
      });
      return { status: 200, body: listPage(rows, query.limit, renderTicket) };
    }),

    'GET /tickets/:id': route({ params: IdParams }, async ({ identity, params }) => ({
      status: 200,
      body: renderTicket(await getTicket(store, identity.workspaceId, params.id)),
    })),

    'POST /tickets/:id/validate': route({ params: IdParams, body: ValidateTicketBody }, async ({ identity, params, body }) => {
      const ticket = await validateTicket(store, identity.workspaceId, params.id, {
        eventId: body.event_id ?? null,
        gate: body.gate ?? null,
        validatorId: body.validator_id ?? null,
      });
      return { status: 200, body: renderValidation(ticket) };
    }),
  });
}
