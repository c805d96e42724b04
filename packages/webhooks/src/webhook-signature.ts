import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** The event a receiver gets (contract section 11). */
export interface WebhookEvent<Data = unknown> {
  id: string;
  type: string;
  created_at: string;
  workspace_id: string;
  data: Data;
}

/** A new endpoint secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks). */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** The HMAC key of a secret: the base64-decoded part after `whsec_` (the prefix is optional). */
function secretKey(secret: string): Buffer {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  if (key.length === 0) throw new WebhookVerificationError('The webhook secret is empty or not base64.');
  return key;
}

function digest(secret: string, id: string, timestamp: string, body: string | Buffer): Buffer {
  return createHmac('sha256', secretKey(secret)).update(`${id}.${timestamp}.`).update(body).digest();
}

/** One Standard Webhooks signature: `v1,` + base64 HMAC-SHA256(key, id + "." + timestamp + "." + body). */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string | Buffer): string {
  return `v1,${digest(secret, id, String(timestampSeconds), body).toString('base64')}`;
}

/** The `webhook-signature` header value: one signature per secret, space-separated (several during a rotation). */
export function webhookSignatureHeader(secrets: readonly string[], id: string, timestampSeconds: number, body: string | Buffer): string {
  return secrets.map((secret) => signWebhook(secret, id, timestampSeconds, body)).join(' ');
}

/** Why a webhook was not accepted; `verifyWebhook` throws nothing else. */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  let value = record[name];
  if (value === undefined) {
    const key = Object.keys(record).find((k) => k.toLowerCase() === name);
    value = key === undefined ? undefined : record[key];
  }
  return Array.isArray(value) ? value.join(' ') : value;
}

export interface VerifyOptions {
  /** Accepted distance between `webhook-timestamp` and now, either way (default 300 s). */
  toleranceSeconds?: number;
  now?: Date;
}

/**
 * Checks a received webhook the Standard Webhooks way and returns the parsed event: `rawBody` must
 * be the exact bytes received (not re-serialised JSON), one of the space-separated `v1,` signatures
 * must match `secret`, and `webhook-timestamp` must be within `toleranceSeconds` of now (replays).
 * Throws WebhookVerificationError otherwise.
 */
export function verifyWebhook<Data = unknown>(
  secret: string,
  headers: WebhookHeaders,
  rawBody: string | Buffer,
  options: VerifyOptions = {},
): WebhookEvent<Data> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id) throw new WebhookVerificationError('Missing webhook-id header.');
  if (!timestamp) throw new WebhookVerificationError('Missing webhook-timestamp header.');
  if (!signatures) throw new WebhookVerificationError('Missing webhook-signature header.');
  if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not epoch seconds.');

  const tolerance = options.toleranceSeconds ?? 300;
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const sent = Number(timestamp);
  if (sent < now - tolerance) throw new WebhookVerificationError('webhook-timestamp is too old.');
  if (sent > now + tolerance) throw new WebhookVerificationError('webhook-timestamp is too far in the future.');

  const expected = digest(secret, id, timestamp, rawBody);
  const matches = signatures.split(' ').some((candidate) => {
    const [version, signature] = candidate.split(',', 2);
    if (version !== 'v1' || !signature) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError('No webhook-signature matches the secret.');

  try {
    return JSON.parse(typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8')) as WebhookEvent<Data>;
  } catch {
    throw new WebhookVerificationError('The webhook body is not JSON.');
  }
}
