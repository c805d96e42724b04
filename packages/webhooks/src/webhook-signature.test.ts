import { generateWebhookSecret, signWebhook, verifyWebhook, webhookSignatureHeader, WebhookVerificationError } from './webhook-signature';

// The Standard Webhooks reference vector: a receiver's stock library must accept what we send.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const AT_VECTOR_TIME = { now: new Date(VECTOR.timestamp * 1000) };

function headersFor(signature: string, timestamp = VECTOR.timestamp, id = VECTOR.id) {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
}

describe('signing (Standard Webhooks)', () => {
  test('reproduces the reference vector: HMAC-SHA256 over id.timestamp.body with the base64-decoded key', () => {
    expect(signWebhook(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature);
  });

  test('a secret is whsec_ + base64 of 32 random bytes, new each time', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(secret);
  });

  test('during a rotation the header carries one signature per secret, space-separated', () => {
    const other = generateWebhookSecret();
    const header = webhookSignatureHeader([VECTOR.secret, other], VECTOR.id, VECTOR.timestamp, VECTOR.body);
    expect(header.split(' ')).toEqual([VECTOR.signature, signWebhook(other, VECTOR.id, VECTOR.timestamp, VECTOR.body)]);
  });
});

describe('verifyWebhook', () => {
  test('returns the parsed event when the signature matches', () => {
    const body = JSON.stringify({ id: 'evt_1', type: 'item.created', created_at: '2024-12-01T09:30:00.000Z', workspace_id: 'w', data: { a: 1 } });
    const secret = generateWebhookSecret();
    const now = new Date();
    const ts = Math.floor(now.getTime() / 1000);
    const event = verifyWebhook(secret, headersFor(signWebhook(secret, 'evt_1', ts, body), ts, 'evt_1'), body);
    expect(event).toEqual(JSON.parse(body));
  });

  test('accepts the reference vector, with or without the whsec_ prefix, from a Buffer or a Headers object', () => {
    expect(verifyWebhook(VECTOR.secret, headersFor(VECTOR.signature), VECTOR.body, AT_VECTOR_TIME)).toEqual({ test: 2432232314 });
    expect(verifyWebhook(VECTOR.secret.slice(6), headersFor(VECTOR.signature), Buffer.from(VECTOR.body), AT_VECTOR_TIME)).toEqual({ test: 2432232314 });
    expect(verifyWebhook(VECTOR.secret, new Headers(headersFor(VECTOR.signature)), VECTOR.body, AT_VECTOR_TIME)).toEqual({ test: 2432232314 });
  });

  test('accepts any one of several space-separated signatures', () => {
    const header = `v1,bm9wZQ== v2,${VECTOR.signature.slice(3)} ${VECTOR.signature}`;
    expect(verifyWebhook(VECTOR.secret, headersFor(header), VECTOR.body, AT_VECTOR_TIME)).toEqual({ test: 2432232314 });
  });

  test('rejects a tampered body', () => {
    expect(() => verifyWebhook(VECTOR.secret, headersFor(VECTOR.signature), '{"test": 2432232315}', AT_VECTOR_TIME)).toThrow(
      new WebhookVerificationError('No webhook-signature matches the secret.'),
    );
  });

  test('rejects another secret, another id and another timestamp', () => {
    expect(() => verifyWebhook(generateWebhookSecret(), headersFor(VECTOR.signature), VECTOR.body, AT_VECTOR_TIME)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(VECTOR.secret, headersFor(VECTOR.signature, VECTOR.timestamp, 'msg_other'), VECTOR.body, AT_VECTOR_TIME)).toThrow(
      WebhookVerificationError,
    );
    expect(() => verifyWebhook(VECTOR.secret, headersFor(VECTOR.signature, VECTOR.timestamp + 1), VECTOR.body, AT_VECTOR_TIME)).toThrow(
      WebhookVerificationError,
    );
  });

  test('rejects a timestamp more than 300 s old or ahead, accepts one at the edge', () => {
    const at = (seconds: number) => ({ now: new Date((VECTOR.timestamp + seconds) * 1000) });
    expect(() => verifyWebhook(VECTOR.secret, headersFor(VECTOR.signature), VECTOR.body, at(301))).toThrow('webhook-timestamp is too old.');
    expect(() => verifyWebhook(VECTOR.secret, headersFor(VECTOR.signature), VECTOR.body, at(-301))).toThrow('webhook-timestamp is too far in the future.');
    expect(verifyWebhook(VECTOR.secret, headersFor(VECTOR.signature), VECTOR.body, at(300))).toEqual({ test: 2432232314 });
    expect(verifyWebhook(VECTOR.secret, headersFor(VECTOR.signature), VECTOR.body, at(-300))).toEqual({ test: 2432232314 });
    // A stale timestamp is refused before the signature is even looked at: replays of old captures fail.
    expect(() => verifyWebhook(VECTOR.secret, headersFor(VECTOR.signature), VECTOR.body)).toThrow('webhook-timestamp is too old.');
    expect(() => verifyWebhook(VECTOR.secret, headersFor(VECTOR.signature), VECTOR.body, { ...at(1000), toleranceSeconds: 1000 })).not.toThrow();
  });

  test('names the missing or malformed header', () => {
    const { 'webhook-id': _id, ...noId } = headersFor(VECTOR.signature);
    expect(() => verifyWebhook(VECTOR.secret, noId, VECTOR.body, AT_VECTOR_TIME)).toThrow('Missing webhook-id header.');
    expect(() => verifyWebhook(VECTOR.secret, { ...headersFor(VECTOR.signature), 'webhook-timestamp': 'yesterday' }, VECTOR.body, AT_VECTOR_TIME)).toThrow(
      'webhook-timestamp is not epoch seconds.',
    );
    expect(() => verifyWebhook(VECTOR.secret, { ...headersFor(VECTOR.signature), 'webhook-signature': undefined }, VECTOR.body, AT_VECTOR_TIME)).toThrow(
      'Missing webhook-signature header.',
    );
  });

  test('a valid signature over a body that is not JSON is still refused, clearly', () => {
    const ts = Math.floor(Date.now() / 1000);
    expect(() => verifyWebhook(VECTOR.secret, headersFor(signWebhook(VECTOR.secret, VECTOR.id, ts, 'nope'), ts), 'nope')).toThrow(
      'The webhook body is not JSON.',
    );
  });
});
