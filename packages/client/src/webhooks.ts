import { Webhook, WebhookVerificationError as LibraryVerificationError } from 'standardwebhooks';

/** Why a webhook request was refused: treat the request as not sent by the platform (answer 400 or 401). */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

/** A webhook event as the platform sends it (contract section 11). */
export interface WebhookEvent<Data = unknown> {
  id: string;
  type: string;
  created_at: string;
  workspace_id: string;
  data: Data;
}

/** Request headers as Node (`req.headers`), the Fetch API (`Headers`) or a plain object has them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

function headerValue(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(' ') : value;
}

/**
 * Verifies a webhook request of the platform (Standard Webhooks: `webhook-id`, `webhook-timestamp`
 * within ±5 minutes, `webhook-signature`) and returns its event. `payload` is the raw body exactly
 * as received (never re-serialised JSON). During a secret rotation the platform signs with both
 * secrets, space-separated: either secret verifies; `secret` may also list several (the
 * receiver's own rotation). Throws `WebhookVerificationError`.
 */
export function verifyWebhook<Data = unknown>(payload: string | Uint8Array, headers: WebhookHeaders, secret: string | readonly string[]): WebhookEvent<Data> {
  const text = typeof payload === 'string' ? payload : new TextDecoder('utf-8', { fatal: false }).decode(payload);
  const signed: Record<string, string> = {};
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    const value = headerValue(headers, name);
    if (value === undefined) throw new WebhookVerificationError(`missing header ${name}`);
    signed[name] = value;
  }
  let failure: unknown;
  for (const each of typeof secret === 'string' ? [secret] : secret) {
    try {
      return new Webhook(each).verify(text, signed) as WebhookEvent<Data>;
    } catch (err) {
      if (!(err instanceof LibraryVerificationError)) throw new WebhookVerificationError(`unusable secret or body: ${(err as Error).message}`);
      failure = err;
    }
  }
  throw new WebhookVerificationError(failure instanceof Error ? failure.message : 'no secret given');
}
