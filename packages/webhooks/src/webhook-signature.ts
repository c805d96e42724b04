import { createHmac, randomBytes } from 'node:crypto';
import { WebhookVerificationError, type WebhookSecret } from '@platform/webhook-verify';

// Receivers (and this package's tests) verify with the one verifier, shared with @platform/client/webhooks.
export { verifyWebhook, webhookSecret, WebhookVerificationError, type WebhookEvent, type WebhookHeaders, type WebhookSecret } from '@platform/webhook-verify';

const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks). */
export function generateWebhookSecret(): WebhookSecret {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
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
