import { generateWebhookSecret, signWebhook, verifyWebhook, webhookSignatureHeader, WebhookVerificationError } from './webhook-signature';

// The Standard Webhooks reference vector: a receiver's stock library must accept what we send.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' as const,
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

function headersFor(signature: string, timestamp = VECTOR.timestamp, id = VECTOR.id): Record<string, string> {
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

describe('what the platform signs, the one verifier accepts (the one receivers and the client use)', () => {
  afterEach(() => jest.useRealTimers());

  test('the reference vector as signWebhook signs it verifies at its time, and not 301 s later', () => {
    jest.useFakeTimers({ now: VECTOR.timestamp * 1000 });
    const headers = headersFor(signWebhook(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body));
    expect(verifyWebhook(VECTOR.body, headers, VECTOR.secret)).toEqual({ test: 2432232314 });
    jest.setSystemTime((VECTOR.timestamp + 301) * 1000);
    expect(() => verifyWebhook(VECTOR.body, headers, VECTOR.secret)).toThrow(WebhookVerificationError);
  });

  test('an event signed now with a new secret verifies, from the string or the bytes sent', () => {
    const body = JSON.stringify({ id: 'evt_1', type: 'item.created', created_at: '2024-12-01T09:30:00.000Z', workspace_id: 'w', data: { a: 1 } });
    const secret = generateWebhookSecret();
    const ts = Math.floor(Date.now() / 1000);
    const headers = headersFor(webhookSignatureHeader([secret], 'evt_1', ts, body), ts, 'evt_1');
    expect(verifyWebhook(body, headers, secret)).toEqual(JSON.parse(body));
    expect(verifyWebhook(Buffer.from(body), new Headers(headers), secret).id).toBe('evt_1');
    expect(() => verifyWebhook(body.replace('item.created', 'item.deleted'), headers, secret)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(body, headers, generateWebhookSecret())).toThrow(WebhookVerificationError);
  });

  test('a rotation header (one signature per secret) verifies with either secret', () => {
    const body = JSON.stringify({ id: 'evt_2', type: 'item.created', created_at: '2024-12-01T09:30:00.000Z', workspace_id: 'w', data: {} });
    const [current, previous] = [generateWebhookSecret(), generateWebhookSecret()];
    const ts = Math.floor(Date.now() / 1000);
    const headers = headersFor(webhookSignatureHeader([current, previous], 'evt_2', ts, body), ts, 'evt_2');
    expect(verifyWebhook(body, headers, current).id).toBe('evt_2');
    expect(verifyWebhook(body, headers, previous).id).toBe('evt_2');
  });
});
