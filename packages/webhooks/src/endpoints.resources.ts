import { z } from 'zod';
import { EVENT_TYPES, listOf, seriesOf, Uuid, UtcTimestamp } from '@platform/core';

/**
 * Webhook endpoints and deliveries as the API returns them (contract section 11). The render
 * functions are typed against these schemas and the API reference is generated from them.
 */

/** What a URL's password is shown as (contract section 11). */
export const REDACTED_PASSWORD = '***';

// scheme ":" then any slashes (WHATWG accepts `https:host`, `https:\\host`), then the authority up to its last "@".
const USERINFO = /^([\x00-\x20]*[A-Za-z][A-Za-z0-9+.-]*:[\\/\t\n\r]*)([^\\/?#]*)@/;

/**
 * The URL as sent, with its password (if any) replaced by `***`: `https://user:***@host/...`.
 * The rest stays byte for byte; a URL whose password cannot be found in the text (tabs and
 * newlines inside it, which the URL parser drops) is shown normalized, with the password replaced.
 */
export function redactUrlPassword(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (parsed.password === '') return url;
  parsed.password = REDACTED_PASSWORD;
  const match = USERINFO.exec(url);
  if (match) {
    const userinfo = match[2]!;
    const colon = userinfo.indexOf(':');
    const candidate = `${match[1]}${userinfo.slice(0, colon + 1)}${REDACTED_PASSWORD}@${url.slice(match[0].length)}`;
    if (colon !== -1 && sameUrl(candidate, parsed)) return candidate;
  }
  return parsed.href;
}

function sameUrl(candidate: string, expected: URL): boolean {
  try {
    return new URL(candidate).href === expected.href;
  } catch {
    return false;
  }
}

const EXAMPLE_ENDPOINT_ID = '2e4c6a8b-0d1f-4e3a-9b5c-7d9f1b3d5f7a';

/** `["*"]`, or the event types an endpoint receives. */
export const EndpointEvents = z.array(z.enum([...EVENT_TYPES, '*'])).meta({ description: '`["*"]` alone (every event type) or a list of event types.' });

export const Endpoint = z
  .object({
    id: Uuid,
    url: z.string().meta({ format: 'uri', description: 'As sent, except a password, shown as `***` (`https://user:***@host/...`).' }),
    events: EndpointEvents,
    enabled: z.boolean(),
    created_at: UtcTimestamp,
  })
  .meta({
    id: 'WebhookEndpoint',
    description: 'Where the service sends its events. The secret is shown only on creation and rotation.',
    examples: [{ id: EXAMPLE_ENDPOINT_ID, url: 'https://example.com/hooks/platform', events: ['*'], enabled: true, created_at: '2024-12-01T09:30:00.000Z' }],
  });
export type Endpoint = z.infer<typeof Endpoint>;

export const EndpointWithSecret = Endpoint.extend({
  secret: z
    .string()
    .regex(/^whsec_[A-Za-z0-9+/]{43}=$/)
    .meta({ description: 'The signing secret: `whsec_` + base64 of 32 random bytes. Shown only here: store it now.' }),
}).meta({
  id: 'WebhookEndpointWithSecret',
  description: 'An endpoint with its new signing secret, on creation and rotation only.',
  examples: [
    {
      id: EXAMPLE_ENDPOINT_ID,
      url: 'https://example.com/hooks/platform',
      events: ['*'],
      enabled: true,
      created_at: '2024-12-01T09:30:00.000Z',
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/TcKUNKKnBE=',
    },
  ],
});
export type EndpointWithSecret = z.infer<typeof EndpointWithSecret>;

export const Delivery = z
  .object({
    id: Uuid,
    event_id: z.string().meta({ description: 'The event (`evt_` + 26 characters), the same on every attempt.' }),
    event_type: z.string(),
    attempt: z.int().min(1).meta({ description: 'Counts from 1.' }),
    status: z.enum(['succeeded', 'failed']),
    response_status: z.int().nullable().meta({ description: "The receiver's HTTP status; null when it did not answer." }),
    error: z.string().nullable(),
    created_at: UtcTimestamp,
  })
  .meta({
    id: 'WebhookDelivery',
    description: 'One delivery attempt of one event.',
    examples: [
      {
        id: '7c9e1a3b-5d7f-4b1c-8e2a-4c6e8a0c2e4f',
        event_id: 'evt_01JE2Z3K4M5N6P7Q8R9S0T1V2W',
        event_type: 'ticket.validated',
        attempt: 1,
        status: 'succeeded',
        response_status: 204,
        error: null,
        created_at: '2024-12-01T09:30:01.000Z',
      },
    ],
  });
export type Delivery = z.infer<typeof Delivery>;

export const EndpointList = listOf(Endpoint, 'WebhookEndpointList');
export const DeliveryList = listOf(Delivery, 'WebhookDeliveryList');

const count = (description: string) => z.int().min(0).meta({ description });

/** An endpoint's delivery attempts over time (decision 0016). */
export const DeliverySeries = seriesOf(
  'WebhookDeliverySeries',
  "An endpoint's delivery attempts per bucket by outcome, counted by when each attempt was recorded (its `created_at`).",
  { endpoint_id: Uuid },
  {
    succeeded: count('Attempts the receiver answered with a 2xx.'),
    failed: count('Attempts that failed: another status, no answer, or not sent (the endpoint was disabled).'),
  },
  {
    endpoint_id: EXAMPLE_ENDPOINT_ID,
    interval: 'hour',
    from: '2024-12-01T08:00:00.000Z',
    to: '2024-12-01T10:00:00.000Z',
    buckets: [
      { start: '2024-12-01T08:00:00.000Z', succeeded: 41, failed: 0 },
      { start: '2024-12-01T09:00:00.000Z', succeeded: 38, failed: 3 },
    ],
  },
);
export type DeliverySeries = z.infer<typeof DeliverySeries>;

/** The answer to a resend: the attempt it queued. */
export const DeliveryResend = z
  .object({
    endpoint_id: Uuid,
    event_id: z.string().meta({ description: 'The event sent again: the same `webhook-id` and body as its first delivery.' }),
    event_type: z.string(),
    attempt: z
      .int()
      .min(1)
      .meta({ description: "The number the attempt's delivery record will carry: one after the latest recorded for this event and endpoint." }),
    status: z.enum(['queued']).meta({ description: 'The attempt is queued; its outcome appears as a delivery record.' }),
  })
  .meta({
    id: 'WebhookDeliveryResend',
    description: 'One more delivery attempt of a recorded event, queued.',
    examples: [{ endpoint_id: EXAMPLE_ENDPOINT_ID, event_id: 'evt_01JE2Z3K4M5N6P7Q8R9S0T1V2W', event_type: 'ticket.validated', attempt: 2, status: 'queued' }],
  });
export type DeliveryResend = z.infer<typeof DeliveryResend>;
