import { createHmac, hkdfSync } from 'node:crypto';
import {
  bodySha256,
  EMPTY_BODY_SHA256,
  InternalHeaders,
  serviceSigningKey,
  signedIdentityHeaders,
  verifyInternalSignature,
  verifyQuotasSignature,
  type SignedRequest,
} from './internal-signature';

const SECRET = 'unit-test-secret-0123456789';
const KEY = serviceSigningKey(SECRET, 'events');
const BODY = '{"gate":"north"}';
const input = {
  method: 'POST',
  pathAndQuery: '/tickets/1/validate?x=1',
  workspaceId: 'w1',
  keyId: 'k1',
  scopes: ['tickets:read'],
  requestId: 'req-1',
  bodySha256: bodySha256(BODY),
};
const now = 1_750_000_000;
const headers = signedIdentityHeaders(KEY, input, now);
const signed: SignedRequest = { ...input, scopes: 'tickets:read' };

function verify(overrides: Partial<SignedRequest> = {}, at = now, key = KEY): boolean {
  return verifyInternalSignature(key, headers[InternalHeaders.timestamp], headers[InternalHeaders.signature], { ...signed, ...overrides }, at);
}

describe('the gateway signature (contract section 4)', () => {
  test('is the contract MAC: HMAC-SHA256 with an HKDF-SHA256 key per service over the eight lines', () => {
    const key = Buffer.from(hkdfSync('sha256', SECRET, Buffer.alloc(0), 'events', 32));
    const text = [String(now), 'POST', input.pathAndQuery, 'w1', 'k1', 'tickets:read', 'req-1', bodySha256(BODY)].join('\n');
    expect(headers[InternalHeaders.signature]).toBe(createHmac('sha256', key).update(text).digest('hex'));
    expect(headers[InternalHeaders.requestId]).toBe('req-1');
    expect(headers[InternalHeaders.scopes]).toBe('tickets:read');
  });

  test('verifies the same request from 5 s before its timestamp to 60 s after', () => {
    expect(verify({}, now + 60)).toBe(true);
    expect(verify({}, now - 5)).toBe(true);
  });

  test('is refused when older than 60 s or more than 5 s ahead', () => {
    expect(verify({}, now + 61)).toBe(false);
    expect(verify({}, now - 6)).toBe(false);
  });

  test.each<[string, Partial<SignedRequest>]>([
    ['method', { method: 'GET' }],
    ['path', { pathAndQuery: '/tickets/2/validate?x=1' }],
    ['workspace', { workspaceId: 'w2' }],
    ['key', { keyId: 'k2' }],
    ['scopes (a read-only key replayed as unrestricted)', { scopes: '*' }],
    ['request id', { requestId: 'req-2' }],
    ['body', { bodySha256: bodySha256('{"gate":"south"}') }],
    ['body (emptied)', { bodySha256: EMPTY_BODY_SHA256 }],
  ])('is refused when the %s differs', (_what, overrides) => {
    expect(verify(overrides)).toBe(false);
  });

  test('is refused by another service (its key is derived for the service it was made for)', () => {
    expect(verify({}, now, serviceSigningKey(SECRET, 'warehouse'))).toBe(false);
    expect(verify({}, now, serviceSigningKey(SECRET, 'pipelines'))).toBe(false);
  });

  test('is refused with another secret or malformed headers', () => {
    expect(verify({}, now, serviceSigningKey('another-secret-0123456789', 'events'))).toBe(false);
    expect(verifyInternalSignature(KEY, 'abc', 'zz', signed, now)).toBe(false);
    expect(verifyInternalSignature(KEY, undefined, undefined, signed, now)).toBe(false);
    expect(verifyInternalSignature(KEY, String(now), 'F'.repeat(64), signed, now)).toBe(false);
  });

  test('an unrestricted key is signed as "*"; no body hashes as the empty body', () => {
    const unrestricted = signedIdentityHeaders(KEY, { ...input, scopes: null, bodySha256: undefined }, now);
    expect(unrestricted[InternalHeaders.scopes]).toBe('*');
    expect(
      verifyInternalSignature(
        KEY,
        unrestricted[InternalHeaders.timestamp],
        unrestricted[InternalHeaders.signature],
        { ...signed, scopes: '*', bodySha256: bodySha256(Buffer.alloc(0)) },
        now,
      ),
    ).toBe(true);
  });
});

describe('the quotas beside the signature (contract section 20)', () => {
  const quotas = { pipelines: 3, scheduled_pipelines: 2, webhook_endpoints: 1 };
  const withQuotas = signedIdentityHeaders(KEY, { ...input, quotas }, now);

  test('leave the section 4 signature as the contract states it', () => {
    expect(withQuotas[InternalHeaders.signature]).toBe(headers[InternalHeaders.signature]);
    expect(withQuotas[InternalHeaders.quotas]).toBe('pipelines=3;scheduled_pipelines=2;webhook_endpoints=1');
  });

  test('hold only for the request they were signed with, and only with their own value', () => {
    const mac = withQuotas[InternalHeaders.quotasSignature]!;
    const signature = withQuotas[InternalHeaders.signature]!;
    expect(verifyQuotasSignature(KEY, signature, withQuotas[InternalHeaders.quotas]!, mac)).toBe(true);
    expect(verifyQuotasSignature(KEY, signature, 'pipelines=9;scheduled_pipelines=2;webhook_endpoints=1', mac)).toBe(false);
    const other = signedIdentityHeaders(KEY, { ...input, requestId: 'req-2', quotas }, now);
    expect(verifyQuotasSignature(KEY, other[InternalHeaders.signature]!, withQuotas[InternalHeaders.quotas]!, mac)).toBe(false);
    expect(verifyQuotasSignature(serviceSigningKey(SECRET, 'warehouse'), signature, withQuotas[InternalHeaders.quotas]!, mac)).toBe(false);
    expect(verifyQuotasSignature(KEY, signature, withQuotas[InternalHeaders.quotas]!, 'zz')).toBe(false);
  });
});
