import {
  conflict,
  invalidRequest,
  notFound,
  seriesFrame,
  quotaExceeded,
  temporarilyUnavailable,
  timestamp,
  type Cursor,
  type SeriesWindow,
  type WorkspaceId,
} from '@platform/core';
import { createAddressGuard, hostOfUrl, NonPublicAddressError, type Resolver } from '@platform/address-guard';
import { redactUrlPassword, type Delivery, type DeliveryResend, type DeliverySeries, type Endpoint } from './endpoints.resources';
import { generateWebhookSecret } from './webhook-signature';
import { queueResend, type ResendOutcome, type ResendQueue } from './deliveries.resend';
import type { DeliveryBucketRow, DeliveryRow, EndpointRow, WebhooksStore } from './webhooks.store';

/** How long a rotated-out secret keeps signing deliveries (contract section 11). */
export const PREVIOUS_SECRET_VALIDITY_MS = 24 * 60 * 60 * 1000;

export interface EndpointsOptions {
  /** The service's webhooks store (webhooksStore over its client): routes and services never hold the client. */
  store: WebhooksStore;
  /** WEBHOOKS_ALLOW_PRIVATE: accept private and loopback targets (tests, local use). */
  allowPrivate: boolean;
  /** Host name resolution for the SSRF guard (default: the OS resolver). */
  resolve?: Resolver;
  /** The service's delivery queue (its webhooks runtime's), where a resend goes; without it a resend answers 503. */
  queue?: ResendQueue;
}

/** A resend as the service decided it: the attempt it queued. */
export interface Resend {
  endpointId: string;
  eventId: string;
  eventType: string;
  /** The number the attempt's delivery record is expected to carry: one after the pair's latest. */
  attempt: number;
  outcome: ResendOutcome;
}

/** The endpoint as the API renders it; the secret is never part of it. */
export function renderEndpoint(endpoint: EndpointRow): Endpoint {
  return {
    id: endpoint.id,
    url: redactUrlPassword(endpoint.url),
    // Written only through CreateEndpointBody / UpdateEndpointBody, which allow just these values.
    events: endpoint.events as Endpoint['events'],
    enabled: endpoint.enabled,
    created_at: timestamp(endpoint.createdAt),
  };
}

/** A delivery record: one per attempt. */
export function renderDelivery(delivery: DeliveryRow): Delivery {
  return {
    id: delivery.id,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    attempt: delivery.attempt,
    status: delivery.status,
    response_status: delivery.responseStatus,
    error: delivery.error,
    created_at: timestamp(delivery.createdAt),
  };
}

/** An endpoint's delivery series: the window's frame and its buckets. */
export function renderDeliverySeries(endpointId: string, window: SeriesWindow, buckets: DeliveryBucketRow[]): DeliverySeries {
  return {
    endpoint_id: endpointId,
    ...seriesFrame(window),
    buckets: buckets.map((b) => ({ start: timestamp(b.start), succeeded: b.succeeded, failed: b.failed })),
  };
}

export function renderResend(resend: Resend): DeliveryResend {
  return { endpoint_id: resend.endpointId, event_id: resend.eventId, event_type: resend.eventType, attempt: resend.attempt, status: 'queued' };
}

/** `["*"]` alone, or the listed types once each in the order given. */
function normalizeEvents(events: string[]): string[] {
  return events.includes('*') ? ['*'] : [...new Set(events)];
}

/** Endpoint management, free of HTTP: the routes call these. */
export function endpointsService(options: EndpointsOptions) {
  const { store } = options;
  const guard = createAddressGuard({ resolve: options.resolve });

  async function checkUrl(url: string): Promise<void> {
    if (options.allowPrivate) return;
    try {
      await guard.check(hostOfUrl(url));
    } catch (err) {
      if (!(err instanceof NonPublicAddressError)) throw err;
      throw invalidRequest([{ in: 'body', field: 'url', code: 'private_address', message: err.message }]);
    }
  }

  async function mustFind(workspaceId: WorkspaceId, id: string): Promise<EndpointRow> {
    const endpoint = await store.findEndpoint(workspaceId, id);
    if (!endpoint) throw notFound('Webhook endpoint');
    return endpoint;
  }

  return {
    /**
     * Creates an endpoint; its secret is returned here and on rotation only. 409 quota_exceeded
     * when the workspace already holds `limit` endpoints in this service (contract section 20).
     */
    async create(
      workspaceId: WorkspaceId,
      input: { url: string; events: string[]; enabled?: boolean },
      limit: number,
    ): Promise<{ endpoint: EndpointRow; secret: string }> {
      await checkUrl(input.url);
      const secret = generateWebhookSecret();
      const result = await store.insertEndpoint(
        workspaceId,
        { url: input.url, events: normalizeEvents(input.events), enabled: input.enabled ?? true, secret },
        limit,
      );
      if (result.kind === 'quota_reached') throw quotaExceeded(result.quota, result.limit);
      return { endpoint: result.endpoint, secret };
    },

    get: mustFind,

    list(workspaceId: WorkspaceId, page: { after?: Cursor; take: number }): Promise<EndpointRow[]> {
      return store.listEndpoints(workspaceId, page);
    },

    async update(workspaceId: WorkspaceId, id: string, input: { url?: string; events?: string[]; enabled?: boolean }): Promise<EndpointRow> {
      await mustFind(workspaceId, id);
      if (input.url !== undefined) await checkUrl(input.url);
      const endpoint = await store.updateEndpoint(workspaceId, id, { ...input, events: input.events && normalizeEvents(input.events) });
      if (!endpoint) throw notFound('Webhook endpoint');
      return endpoint;
    },

    async remove(workspaceId: WorkspaceId, id: string): Promise<void> {
      if (!(await store.deleteEndpoint(workspaceId, id))) throw notFound('Webhook endpoint');
    },

    /** A new secret; the previous one keeps signing (beside the new one) for 24 h. */
    async rotateSecret(workspaceId: WorkspaceId, id: string, now = new Date()): Promise<{ endpoint: EndpointRow; secret: string }> {
      const secret = generateWebhookSecret();
      const endpoint = await store.rotateSecret(workspaceId, id, secret, new Date(now.getTime() + PREVIOUS_SECRET_VALIDITY_MS));
      if (!endpoint) throw notFound('Webhook endpoint');
      return { endpoint, secret };
    },

    async deliveries(workspaceId: WorkspaceId, endpointId: string, page: { after?: Cursor; take: number }): Promise<DeliveryRow[]> {
      await mustFind(workspaceId, endpointId);
      return store.listDeliveries(workspaceId, endpointId, page);
    },

    /** The endpoint's delivery attempts by outcome in each bucket of the window. */
    async deliverySeries(workspaceId: WorkspaceId, endpointId: string, window: SeriesWindow): Promise<DeliveryBucketRow[]> {
      await mustFind(workspaceId, endpointId);
      return store.deliverySeries(workspaceId, endpointId, window);
    },

    /**
     * One more attempt of a recorded delivery's event to its endpoint (decision 0016): 404 for an
     * unknown endpoint or delivery, 409 while the endpoint is disabled or once the event left the
     * outbox (retention), 503 when the delivery queue cannot be reached.
     */
    async resend(workspaceId: WorkspaceId, endpointId: string, deliveryId: string): Promise<Resend> {
      const endpoint = await mustFind(workspaceId, endpointId);
      const delivery = await store.findDelivery(workspaceId, endpointId, deliveryId);
      if (!delivery) throw notFound('Webhook delivery');
      if (!endpoint.enabled) {
        const message = 'The endpoint is disabled; enable it (PATCH enabled: true) to resend.';
        throw conflict(message, undefined, [{ in: 'path', field: 'id', code: 'endpoint_disabled', message }]);
      }
      const event = await store.findOutboxEvent(workspaceId, delivery.eventId);
      if (!event) {
        const message = 'The event is older than the outbox keeps events and can no longer be sent.';
        throw conflict(message, undefined, [{ in: 'path', field: 'delivery_id', code: 'event_expired', message }]);
      }
      const { queue } = options;
      if (!queue) throw temporarilyUnavailable('Webhook deliveries are not running; retry.');
      const latest = await store.latestAttempt(workspaceId, endpointId, event.id);
      let outcome: ResendOutcome;
      try {
        outcome = await queueResend(queue, event, endpointId, latest);
      } catch {
        // The producer fails fast while Redis is away (deliveries.queue.ts): nothing was queued.
        throw temporarilyUnavailable('The delivery queue is briefly unreachable; retry.');
      }
      return { endpointId, eventId: event.id, eventType: event.type, attempt: latest + 1, outcome };
    },
  };
}
export type EndpointsService = ReturnType<typeof endpointsService>;
