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

/**
 * An endpoint's signing secret as the platform shows it: `whsec_` + base64. The type is what makes
 * `verifyWebhook(secret, headers, body)` (arguments swapped) a compile error: a body typed `string`
 * is not a `WebhookSecret`. Type a secret read as a plain string with `webhookSecret(value)`.
 */
export type WebhookSecret = `whsec_${string}`;

const SECRET_PREFIX = 'whsec_';

/** The secret in `value` (an environment variable, a stored string), checked once; throws TypeError if it is none. */
export function webhookSecret(value: string | undefined): WebhookSecret {
  if (value === undefined || !value.startsWith(SECRET_PREFIX)) throw new TypeError('A webhook secret is whsec_ + base64, as the platform shows it.');
  try {
    new Webhook(value);
  } catch (err) {
    throw new TypeError(`Not a usable webhook secret: ${(err as Error).message}`, { cause: err });
  }
  return value as WebhookSecret;
}

function headerValue(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(' ') : value;
}

function signer(secret: string): Webhook {
  try {
    return new Webhook(secret);
  } catch (err) {
    throw new WebhookVerificationError(`unusable secret (the arguments are payload, headers, secret): ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Verifies a webhook request of the platform (Standard Webhooks: `webhook-id`, `webhook-timestamp`
 * within ±5 minutes of now, `webhook-signature`) and returns its event. `payload` is the raw body
 * exactly as received (never re-serialised JSON). During a secret rotation the platform signs with
 * both secrets, space-separated: either secret verifies; `secret` may also list several (the
 * receiver's own rotation). Throws `WebhookVerificationError`.
 */
export function verifyWebhook<Data = unknown>(
  payload: string | Uint8Array,
  headers: WebhookHeaders,
  secret: WebhookSecret | readonly WebhookSecret[],
): WebhookEvent<Data> {
  const text = typeof payload === 'string' ? payload : new TextDecoder('utf-8', { fatal: false }).decode(payload);
  const signed: Record<string, string> = {};
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    const value = headerValue(headers, name);
    if (value === undefined) throw new WebhookVerificationError(`missing header ${name}`);
    signed[name] = value;
  }
  const secrets: readonly string[] = typeof secret === 'string' ? [secret] : secret;
  if (secrets.length === 0) throw new WebhookVerificationError('no secret given');
  let failure: unknown;
  for (const each of secrets) {
    try {
      // The library checks the timestamp against Date.now() (it takes no clock) and the signature, then parses the body.
      return signer(each).verify(text, signed) as WebhookEvent<Data>;
    } catch (err) {
      if (err instanceof WebhookVerificationError) throw err;
      if (err instanceof SyntaxError) throw new WebhookVerificationError(`the body is not JSON: ${err.message}`, { cause: err });
      if (!(err instanceof LibraryVerificationError)) throw new WebhookVerificationError((err as Error).message, { cause: err });
      failure = err;
    }
  }
  throw new WebhookVerificationError((failure as Error).message);
}
