import { Router } from 'express';
import { z } from 'zod';
import {
  EVENT_TYPES,
  ListQuery,
  mountRoutes,
  pageOf,
  quotaExceededDoc,
  resource,
  route,
  type RouteDeclaration,
  type RouteDefinition,
  SeriesQuery,
  Uuid,
  WEBHOOK_ENDPOINT_ROUTES,
  type WebhookRouteKey,
} from '@platform/core';
import { DeliveryList, DeliveryResend, DeliverySeries, Endpoint, EndpointList, EndpointWithSecret } from './endpoints.resources';
import { endpointsService, renderDelivery, renderDeliverySeries, renderEndpoint, renderResend, type EndpointsOptions } from './endpoints.service';
import type { EndpointRow } from './webhooks.store';

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
  )
  .meta({ format: 'uri', description: 'An absolute http(s) URL; private and loopback addresses are refused.' });

const EventTypes = z
  .array(z.enum([...EVENT_TYPES, '*']))
  .min(1)
  .max(EVENT_TYPES.length + 1)
  .refine((events) => !events.includes('*') || events.every((e) => e === '*'), {
    message: 'must be ["*"] alone or a list of event types',
    params: { code: 'invalid_enum' },
  })
  .meta({ description: '`["*"]` alone (every event type, including ones added later) or a list of event types.' });

export const CreateEndpointBody = z.strictObject({
  url: WebhookUrl,
  events: EventTypes,
  enabled: z.boolean().optional().meta({ description: 'Default true.' }),
});
export type CreateEndpointBody = z.infer<typeof CreateEndpointBody>;

export const UpdateEndpointBody = z.strictObject({
  url: WebhookUrl.optional(),
  events: EventTypes.optional(),
  enabled: z.boolean().optional(),
});
export type UpdateEndpointBody = z.infer<typeof UpdateEndpointBody>;

const IdParams = z.object({ id: Uuid });
const DeliveryParams = z.object({ id: Uuid, delivery_id: Uuid });
const NoBody = z.strictObject({});

const TAG = 'Webhook endpoints';

/** The OpenAPI tag of the webhook endpoint routes, as each service's document lists it. */
export const WEBHOOK_ENDPOINTS_TAG = {
  name: TAG,
  description: 'Where the service sends its events (Standard Webhooks), and the record of every delivery attempt.',
};
const URL_REFUSED =
  'The URL targets a private or loopback address (`errors[0].code: private_address`), unless the platform runs with `WEBHOOKS_ALLOW_PRIVATE=true`.';

const ENDPOINT_ANSWER = { 200: { description: 'The endpoint.', schema: Endpoint } };

/** The routes on one endpoint (`:id`): the webhook endpoints' tag, and 404 when the workspace has no endpoint with that id. */
const oneEndpoint = resource({ name: 'webhook endpoint', params: IdParams, schema: Endpoint, tag: TAG });

/** The resend route: an endpoint and one of its delivery records. */
const oneDelivery = resource({
  name: 'webhook delivery',
  params: DeliveryParams,
  schema: DeliveryResend,
  tag: TAG,
  notFound: 'No webhook endpoint with this id in the workspace, or no delivery record with this id at that endpoint.',
});

/** What each webhook endpoint route takes and answers (no handlers): the routes below validate it, API documents describe it. */
export const webhookRouteDeclarations = {
  'POST /webhook-endpoints': {
    body: CreateEndpointBody,
    docs: {
      operationId: 'createWebhookEndpoint',
      summary: 'Create a webhook endpoint',
      tag: TAG,
      description: 'The answer carries the signing secret, shown only here (and on rotation). Deliveries are signed as Standard Webhooks.',
      responses: { 201: { description: 'The endpoint with its secret.', schema: EndpointWithSecret } },
      errors: {
        400: URL_REFUSED,
        409: quotaExceededDoc(
          'The workspace already has as many webhook endpoints in this service as its `webhook_endpoints` quota allows ' +
            '(`errors[0].code: quota_exceeded`, `error.quota`, `error.limit`); nothing was created. Deleting an endpoint makes room.',
          'webhook_endpoints',
        ),
      },
      requestExample: { url: 'https://example.com/hooks/platform', events: ['*'] },
    },
  },
  'GET /webhook-endpoints': {
    query: ListQuery,
    docs: {
      operationId: 'listWebhookEndpoints',
      summary: 'List webhook endpoints',
      tag: TAG,
      responses: { 200: { description: 'One page of endpoints, oldest first.', schema: EndpointList } },
    },
  },
  'GET /webhook-endpoints/:id': oneEndpoint.route({
    docs: {
      operationId: 'getWebhookEndpoint',
      summary: 'Retrieve a webhook endpoint',
      responses: ENDPOINT_ANSWER,
    },
  }),
  'PATCH /webhook-endpoints/:id': oneEndpoint.route({
    body: UpdateEndpointBody,
    docs: {
      operationId: 'updateWebhookEndpoint',
      summary: 'Update a webhook endpoint',
      description: 'Changes the URL, the event types or whether the endpoint is enabled; omitted fields keep their value.',
      responses: ENDPOINT_ANSWER,
      errors: { 400: URL_REFUSED },
      requestExample: { enabled: false },
    },
  }),
  'DELETE /webhook-endpoints/:id': oneEndpoint.route({
    docs: {
      operationId: 'deleteWebhookEndpoint',
      summary: 'Delete a webhook endpoint',
      responses: { 204: { description: 'Deleted: the endpoint gets no further events.' } },
    },
  }),
  'GET /webhook-endpoints/:id/deliveries': oneEndpoint.route({
    query: ListQuery,
    docs: {
      operationId: 'listWebhookDeliveries',
      summary: "List an endpoint's delivery attempts",
      responses: { 200: { description: 'One page of delivery attempts, oldest first; one record per attempt.', schema: DeliveryList } },
    },
  }),
  'POST /webhook-endpoints/:id/rotate-secret': oneEndpoint.route({
    body: NoBody,
    docs: {
      operationId: 'rotateWebhookSecret',
      summary: "Rotate an endpoint's secret",
      description: 'A new secret signs from now on; the previous one keeps signing beside it for 24 h, so receivers can switch without losing events.',
      responses: { 200: { description: 'The endpoint with its new secret.', schema: EndpointWithSecret } },
    },
  }),
  'GET /webhook-endpoints/:id/stats/series': oneEndpoint.route({
    query: SeriesQuery,
    docs: {
      operationId: 'getWebhookDeliverySeries',
      summary: "An endpoint's delivery attempts over time",
      description:
        'Delivery attempts per hour or day by outcome, counted by when each attempt was recorded; every bucket of the range is present, ' +
        'zeros included, so a chart needs no gap filling. Records older than the delivery retention (30 days by default) are no longer counted.',
      responses: { 200: { description: 'The series.', schema: DeliverySeries } },
    },
  }),
  'POST /webhook-endpoints/:id/deliveries/:delivery_id/resend': oneDelivery.route({
    body: NoBody,
    docs: {
      operationId: 'resendWebhookDelivery',
      summary: 'Resend a delivery',
      description:
        "Queues one more attempt of the delivery's event to this endpoint: the same `webhook-id` and body, signed with the endpoint's current secret. " +
        'Its outcome is recorded as a new delivery record numbered after the latest attempt; a failed resend is retried on what is left of the retry ' +
        "schedule after that number. While the event's delivery is waiting for a retry, that retry is made now instead; while an attempt is under way, " +
        'that attempt is the resend.',
      responses: { 202: { description: 'The attempt is queued.', schema: DeliveryResend } },
      errors: {
        409:
          'The endpoint is disabled (`errors[0].code: endpoint_disabled`), or the event is older than the outbox keeps events ' +
          '(7 days by default) and can no longer be sent (`errors[0].code: event_expired`).',
      },
    },
  }),
} satisfies Record<WebhookRouteKey, RouteDeclaration>;

/** The webhook endpoint route declarations wired to handlers with the webhooks store, keyed like core's contract routes. */
export function webhookRoutes(options: EndpointsOptions): Record<WebhookRouteKey, RouteDefinition> {
  const endpoints = endpointsService(options);
  return {
    'POST /webhook-endpoints': route(webhookRouteDeclarations['POST /webhook-endpoints'], async ({ identity, body }) => {
      const { endpoint, secret } = await endpoints.create(identity.workspaceId, body, identity.quotas.webhook_endpoints);
      return { status: 201, body: withSecret(endpoint, secret) };
    }),

    'GET /webhook-endpoints': route(webhookRouteDeclarations['GET /webhook-endpoints'], async ({ identity, query }) => {
      return { status: 200, body: await pageOf(query, (page) => endpoints.list(identity.workspaceId, page), renderEndpoint) };
    }),

    'GET /webhook-endpoints/:id': route(webhookRouteDeclarations['GET /webhook-endpoints/:id'], async ({ identity, params }) => ({
      status: 200,
      body: renderEndpoint(await endpoints.get(identity.workspaceId, params.id)),
    })),

    'PATCH /webhook-endpoints/:id': route(webhookRouteDeclarations['PATCH /webhook-endpoints/:id'], async ({ identity, params, body }) => ({
      status: 200,
      body: renderEndpoint(await endpoints.update(identity.workspaceId, params.id, body)),
    })),

    'DELETE /webhook-endpoints/:id': route(webhookRouteDeclarations['DELETE /webhook-endpoints/:id'], async ({ identity, params }) => {
      await endpoints.remove(identity.workspaceId, params.id);
      return { status: 204 };
    }),

    'GET /webhook-endpoints/:id/deliveries': route(webhookRouteDeclarations['GET /webhook-endpoints/:id/deliveries'], async ({ identity, params, query }) => {
      return { status: 200, body: await pageOf(query, (page) => endpoints.deliveries(identity.workspaceId, params.id, page), renderDelivery) };
    }),

    'POST /webhook-endpoints/:id/rotate-secret': route(webhookRouteDeclarations['POST /webhook-endpoints/:id/rotate-secret'], async ({ identity, params }) => {
      const { endpoint, secret } = await endpoints.rotateSecret(identity.workspaceId, params.id);
      return { status: 200, body: withSecret(endpoint, secret) };
    }),

    'GET /webhook-endpoints/:id/stats/series': route(
      webhookRouteDeclarations['GET /webhook-endpoints/:id/stats/series'],
      async ({ identity, params, query }) => ({
        status: 200,
        body: renderDeliverySeries(params.id, query, await endpoints.deliverySeries(identity.workspaceId, params.id, query)),
      }),
    ),

    'POST /webhook-endpoints/:id/deliveries/:delivery_id/resend': route(
      webhookRouteDeclarations['POST /webhook-endpoints/:id/deliveries/:delivery_id/resend'],
      async ({ identity, params }) => ({
        status: 202,
        body: renderResend(await endpoints.resend(identity.workspaceId, params.id, params.delivery_id)),
      }),
    ),
  };
}

function withSecret(endpoint: EndpointRow, secret: string): EndpointWithSecret {
  return { ...renderEndpoint(endpoint), secret };
}

/** An Express router with just the webhook routes (for a service's tests or a standalone mount). */
export function webhooksRouter(options: EndpointsOptions): Router {
  return mountRoutes(Router(), WEBHOOK_ROUTES, webhookRoutes(options));
}
