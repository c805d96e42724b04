import { Webhook } from 'standardwebhooks';
import { verifyWebhook, webhookSecret, WebhookVerificationError, type WebhookSecret } from './verify-webhook';

// The Standard Webhooks reference vector: what any sender's stock library signs, we accept.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
} as const;
const OTHER_SECRET = webhookSecret(`whsec_${Buffer.from('another secret, 24 bytes').toString('base64')}`);

function headersFor(signature: string, timestamp: number = VECTOR.timestamp, id: string = VECTOR.id): Record<string, string> {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
}

/** The library verifies against Date.now() (it takes no clock): the clock is set to the vector's time plus `offsetSeconds`. */
function atVectorTime(offsetSeconds = 0): void {
  jest.useFakeTimers({ now: (VECTOR.timestamp + offsetSeconds) * 1000 });
}

afterEach(() => jest.useRealTimers());

test('accepts the reference vector from a string, a Buffer or bytes, with Node-style, mixed-case or Fetch headers', () => {
  atVectorTime();
  const headers = headersFor(VECTOR.signature);
  expect(verifyWebhook(VECTOR.body, headers, VECTOR.secret)).toEqual({ test: 2432232314 });
  expect(verifyWebhook(Buffer.from(VECTOR.body), headers, VECTOR.secret)).toEqual({ test: 2432232314 });
  expect(verifyWebhook(new TextEncoder().encode(VECTOR.body), new Headers(headers), VECTOR.secret)).toEqual({ test: 2432232314 });
  const mixedCase = { 'Webhook-Id': VECTOR.id, 'WEBHOOK-TIMESTAMP': String(VECTOR.timestamp), 'Webhook-Signature': VECTOR.signature };
  expect(verifyWebhook(VECTOR.body, mixedCase, VECTOR.secret)).toEqual({ test: 2432232314 });
});

test('returns the event of a request signed now', () => {
  const body = JSON.stringify({ id: 'evt_1', type: 'ticket.validated', created_at: '2024-12-01T09:30:00.000Z', workspace_id: 'w', data: { a: 1 } });
  const now = new Date();
  const headers = headersFor(new Webhook(OTHER_SECRET).sign('evt_1', now, body), Math.floor(now.getTime() / 1000), 'evt_1');
  expect(verifyWebhook<{ a: number }>(body, headers, OTHER_SECRET).data.a).toBe(1);
});

test('while a secret rotates the platform signs with both: either secret verifies, and a receiver may hold several', () => {
  atVectorTime();
  const other = new Webhook(OTHER_SECRET).sign(VECTOR.id, new Date(VECTOR.timestamp * 1000), VECTOR.body);
  const rotating = headersFor(`${other} ${VECTOR.signature}`);
  expect(verifyWebhook(VECTOR.body, rotating, VECTOR.secret)).toEqual({ test: 2432232314 });
  expect(verifyWebhook(VECTOR.body, rotating, OTHER_SECRET)).toEqual({ test: 2432232314 });
  expect(verifyWebhook(VECTOR.body, headersFor(VECTOR.signature), [OTHER_SECRET, VECTOR.secret])).toEqual({ test: 2432232314 });
  // Signatures of another scheme version are skipped, not taken for v1.
  expect(() => verifyWebhook(VECTOR.body, headersFor(`v2,${VECTOR.signature.slice(3)}`), VECTOR.secret)).toThrow(WebhookVerificationError);
});

test('refuses a changed body, another secret, another id and another timestamp', () => {
  atVectorTime();
  expect(() => verifyWebhook('{"test": 2432232315}', headersFor(VECTOR.signature), VECTOR.secret)).toThrow(
    new WebhookVerificationError('No matching signature found'),
  );
  expect(() => verifyWebhook(VECTOR.body, headersFor(VECTOR.signature), OTHER_SECRET)).toThrow(WebhookVerificationError);
  expect(() => verifyWebhook(VECTOR.body, headersFor(VECTOR.signature, VECTOR.timestamp, 'msg_other'), VECTOR.secret)).toThrow(WebhookVerificationError);
  expect(() => verifyWebhook(VECTOR.body, headersFor(VECTOR.signature, VECTOR.timestamp + 1), VECTOR.secret)).toThrow(WebhookVerificationError);
});

test.each([
  [300, 'accepted'],
  [-300, 'accepted'],
  [301, 'too old'],
  [-301, 'too new'],
])('a timestamp %i s from now is %s (tolerance ±5 minutes: old captures cannot be replayed)', (offset, outcome) => {
  atVectorTime(offset);
  const verify = () => verifyWebhook(VECTOR.body, headersFor(VECTOR.signature), VECTOR.secret);
  if (outcome === 'accepted') expect(verify()).toEqual({ test: 2432232314 });
  else expect(verify).toThrow(new WebhookVerificationError(`Message timestamp ${outcome}`));
});

test('names the missing header, and refuses a timestamp that is not a number and a body that is not JSON', () => {
  atVectorTime();
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    const { [name]: _dropped, ...rest } = headersFor(VECTOR.signature);
    expect(() => verifyWebhook(VECTOR.body, rest, VECTOR.secret)).toThrow(new WebhookVerificationError(`missing header ${name}`));
  }
  expect(() => verifyWebhook(VECTOR.body, { ...headersFor(VECTOR.signature), 'webhook-timestamp': 'yesterday' }, VECTOR.secret)).toThrow(
    WebhookVerificationError,
  );
  const signedText = new Webhook(VECTOR.secret).sign(VECTOR.id, new Date(VECTOR.timestamp * 1000), 'nope');
  expect(() => verifyWebhook('nope', headersFor(signedText), VECTOR.secret)).toThrow(/the body is not JSON/);
  expect(() => verifyWebhook(VECTOR.body, headersFor(VECTOR.signature), [])).toThrow(new WebhookVerificationError('no secret given'));
});

test('the secret comes last: the arguments swapped do not compile, and refuse at run time', () => {
  atVectorTime();
  const secret: WebhookSecret = VECTOR.secret;
  const body: string = VECTOR.body;
  // @ts-expect-error a body typed string is not a WebhookSecret (`typecheck` fails if this compiles)
  expect(() => verifyWebhook(secret, headersFor(VECTOR.signature), body)).toThrow(/unusable secret \(the arguments are payload, headers, secret\)/);
});

test('webhookSecret types a secret read as a string, and refuses what is none', () => {
  expect(webhookSecret(VECTOR.secret)).toBe(VECTOR.secret);
  expect(() => webhookSecret(undefined)).toThrow(TypeError);
  expect(() => webhookSecret(VECTOR.secret.slice('whsec_'.length))).toThrow('A webhook secret is whsec_ + base64, as the platform shows it.');
  expect(() => webhookSecret('whsec_not base64!')).toThrow(/Not a usable webhook secret/);
  expect(() => webhookSecret('whsec_')).toThrow(/Not a usable webhook secret/);
});
