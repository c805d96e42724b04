import { signedIdentityHeaders, verifyInternalSignature, InternalHeaders } from './internal-signature';

const SECRET = 'unit-test-secret-0123456789';
const identity = { method: 'POST', pathAndQuery: '/tickets/1/validate?x=1', workspaceId: 'w1', keyId: 'k1' };

function verify(headers: Record<string, string>, overrides: Partial<typeof identity> = {}, now?: number) {
  return verifyInternalSignature(SECRET, headers[InternalHeaders.timestamp], headers[InternalHeaders.signature], { ...identity, ...overrides }, now);
}

describe('the gateway signature', () => {
  const now = 1_750_000_000;
  const headers = signedIdentityHeaders(SECRET, { ...identity, scopes: ['tickets:write'] }, now);

  test('verifies for the same request within 60 s', () => {
    expect(verify(headers, {}, now + 60)).toBe(true);
    expect(headers[InternalHeaders.scopes]).toBe('tickets:write');
  });

  test('fails when the signature is older than 60 s', () => {
    expect(verify(headers, {}, now + 61)).toBe(false);
  });

  test.each([['method', { method: 'GET' }], ['path', { pathAndQuery: '/tickets/2/validate?x=1' }], ['workspace', { workspaceId: 'w2' }], ['key', { keyId: 'k2' }]])(
    'fails when the %s differs',
    (_what, overrides) => {
      expect(verify(headers, overrides, now)).toBe(false);
    },
  );

  test('fails with another secret or malformed headers', () => {
    const other = signedIdentityHeaders('another-secret-0123456789', { ...identity, scopes: null }, now);
    expect(verify(other, {}, now)).toBe(false);
    expect(verifyInternalSignature(SECRET, 'abc', 'zz', identity, now)).toBe(false);
    expect(verifyInternalSignature(SECRET, undefined, undefined, identity, now)).toBe(false);
    expect(other[InternalHeaders.scopes]).toBe('*');
  });
});
