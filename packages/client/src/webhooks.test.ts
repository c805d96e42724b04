import * as oneVerifier from '@platform/webhook-verify';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook, WebhookVerificationError, type WebhookSecret } from './webhooks';

const OLD_SECRET: WebhookSecret = `whsec_${Buffer.from('old secret of 24 bytes!!').toString('base64')}`;
const NEW_SECRET: WebhookSecret = `whsec_${Buffer.from('new secret of 24 bytes!!').toString('base64')}`;
const body = JSON.stringify({
  id: 'evt_01JE2Z3K4M5N6P7Q8R9S0T1V2W',
  type: 'ticket.validated',
  created_at: '2024-12-01T09:30:00.000Z',
  workspace_id: 'w',
  data: {},
});

function signed(secrets: string[], at = new Date(), payload = body): Record<string, string> {
  const id = 'evt_01JE2Z3K4M5N6P7Q8R9S0T1V2W';
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(id, at, payload)).join(' '),
  };
}

test('returns the event of a correctly signed request, from a string, bytes or Fetch Headers', () => {
  const headers = signed([NEW_SECRET]);
  expect(verifyWebhook(body, headers, NEW_SECRET)).toMatchObject({ type: 'ticket.validated' });
  expect(verifyWebhook(new TextEncoder().encode(body), new Headers(headers), NEW_SECRET).id).toBe('evt_01JE2Z3K4M5N6P7Q8R9S0T1V2W');
});

test('while the platform rotates a secret it signs with both: either secret verifies; a receiver may hold several secrets', () => {
  const headers = signed([OLD_SECRET, NEW_SECRET]);
  expect(verifyWebhook(body, headers, OLD_SECRET).type).toBe('ticket.validated');
  expect(verifyWebhook(body, headers, NEW_SECRET).type).toBe('ticket.validated');
  expect(verifyWebhook(body, signed([NEW_SECRET]), [OLD_SECRET, NEW_SECRET]).type).toBe('ticket.validated');
});

test('refuses a changed body, another secret, an old timestamp and a missing header with WebhookVerificationError', () => {
  const headers = signed([NEW_SECRET]);
  expect(() => verifyWebhook(body.replace('validated', 'unvalidated'), headers, NEW_SECRET)).toThrow(WebhookVerificationError);
  expect(() => verifyWebhook(body, headers, OLD_SECRET)).toThrow(WebhookVerificationError);
  expect(() => verifyWebhook(body, signed([NEW_SECRET], new Date(Date.now() - 10 * 60_000)), NEW_SECRET)).toThrow(/too old/);
  const { 'webhook-signature': _dropped, ...unsigned } = headers;
  expect(() => verifyWebhook(body, unsigned, NEW_SECRET)).toThrow(/missing header webhook-signature/);
});

test("is the platform's one verifier, the one @platform/webhooks re-exports too", () => {
  expect(verifyWebhook).toBe(oneVerifier.verifyWebhook);
  expect(WebhookVerificationError).toBe(oneVerifier.WebhookVerificationError);
});
