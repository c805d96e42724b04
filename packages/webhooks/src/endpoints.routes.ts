import { Router } from 'express';
import { z } from 'zod';
import {
  decodeCursor,
  EVENT_TYPES,
  listPage,
  ListQuery,
  mountRoutes,
  route,
  Uuid,
  WEBHOOK_ENDPOINT_ROUTES,
  type RouteDefinition,
  type WebhookRouteKey,
} from '@platform/core';
import { endpointsService, renderDelivery, renderEndpoint, type EndpointsOptions } from './endpoints.service';

/** The webhook routes every service has (contract section 11); the table lives in core's contract. */
export const WEBHOOK_ROUTES = WEBHOOK_ENDPOINT_ROUTES;

const WebhookUrl = z
  .string()
  .max(2048)
  .refine(
    (value) => {
      try {
        const url = new URL(value);
        return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
      } catch {
        return false;
      }
    },
    { message: 'must be an absolute http or https URL', params: { code: 'invalid_format' } },
  );

const EventTypes = z
  .array(z.enum([...EVENT_TYPES, '*']))
  .min(1)
  .max(EVENT_TYPES.length + 1)
  .refine((events) => !events.includes('*') || events.every((e) => e === '*'), {
    message: 'must be ["*"] alone or a list of event types',
    params: { code: 'invalid_enum' },
  });

export const CreateEndpointBody = z.strictObject({
  url: WebhookUrl,
  events: EventTypes,
  enabled: z.boolean().optional(),
});
export type CreateEndpointBody = z.infer<typeof CreateEndpointBody>;

export const UpdateEndpointBody = z.strictObject({
  url: WebhookUrl.optional(),
  events: EventTypes.optional(),
  enabled: z.boolean().optional(),
});
export type UpdateEndpointBody = z.infer<typeof UpdateEndpointBody>;

const IdParams = z.object({ id: Uuid });
const NoBody = z.strictObject({});

/** The webhook endpoint routes as RouteDefinitions, keyed like core's contract routes. */
export function webhookRoutes(options: EndpointsOptions): Record<WebhookRouteKey, RouteDefinition> {
  const endpoints = endpointsService(options);
  return {
    'POST /webhook-endpoints': route({ body: CreateEndpointBody }, async ({ identity, body }) => {
      const { endpoint, secret } = await endpoints.create(identity.workspaceId, body);
      return { status: 201, body: { ...renderEndpoint(endpoint), secret } };
    }),

    'GET /webhook-endpoints': route({ query: ListQuery }, async ({ identity, query }) => {
      const rows = await endpoints.list(identity.workspaceId, { after: decodeCursor(query.cursor), take: query.limit + 1 });
      return { status: 200, body: listPage(rows, query.limit, renderEndpoint) };
    }),

    'GET /webhook-endpoints/:id': route({ params: IdParams }, async ({ identity, params }) => ({
      status: 200,
      body: renderEndpoint(await endpoints.get(identity.workspaceId, params.id)),
    })),

    'PATCH /webhook-endpoints/:id': route({ params: IdParams, body: UpdateEndpointBody }, async ({ identity, params, body }) => ({
      status: 200,
      body: renderEndpoint(await endpoints.update(identity.workspaceId, params.id, body)),
    })),

    'DELETE /webhook-endpoints/:id': route({ params: IdParams }, async ({ identity, params }) => {
      await endpoints.remove(identity.workspaceId, params.id);
      return { status: 204 };
    }),

    'GET /webhook-endpoints/:id/deliveries': route({ params: IdParams, query: ListQuery }, async ({ identity, params, query }) => {
      const rows = await endpoints.deliveries(identity.workspaceId, params.id, { after: decodeCursor(query.cursor), take: query.limit + 1 });
      return { status: 200, body: listPage(rows, query.limit, renderDelivery) };
    }),

    'POST /webhook-endpoints/:id/rotate-secret': route({ params: IdParams, body: NoBody }, async ({ identity, params }) => {
      const { endpoint, secret } = await endpoints.rotateSecret(identity.workspaceId, params.id);
      return { status: 200, body: { ...renderEndpoint(endpoint), secret } };
    }),
  };
}

/** An Express router with just the webhook routes (for a service's tests or a standalone mount). */
export function webhooksRouter(options: EndpointsOptions): Router {
  return mountRoutes(Router(), WEBHOOK_ROUTES, webhookRoutes(options));
}
