import { bearerToken, generateToken, hashToken, isTokenFormat, tokenPrefix } from './tokens';

test('tokens are plk_ + 40 base62 characters, all different', () => {
  const tokens = new Set(Array.from({ length: 200 }, generateToken));
  expect(tokens.size).toBe(200);
  for (const token of tokens) {
    expect(token).toMatch(/^plk_[0-9A-Za-z]{40}$/);
    expect(isTokenFormat(token)).toBe(true);
  }
});

test('the format check wants plk_ and at least 32 base62 characters', () => {
  expect(isTokenFormat(`plk_${'a'.repeat(32)}`)).toBe(true);
  expect(isTokenFormat(`plk_${'a'.repeat(31)}`)).toBe(false);
  expect(isTokenFormat(`pk_${'a'.repeat(40)}`)).toBe(false);
  expect(isTokenFormat(`plk_${'a'.repeat(39)}-`)).toBe(false);
});

test('only the SHA-256 hex is stored; the prefix shows the start of the token', () => {
  expect(hashToken('plk_x')).toMatch(/^[0-9a-f]{64}$/);
  expect(tokenPrefix('plk_abcdefgh12345')).toBe('plk_abcdefgh');
});

test('bearer tokens are read case-insensitively from the Authorization header', () => {
  expect(bearerToken('Bearer plk_abc')).toBe('plk_abc');
  expect(bearerToken('bearer plk_abc')).toBe('plk_abc');
  expect(bearerToken('Basic abc')).toBeUndefined();
  expect(bearerToken(undefined)).toBeUndefined();
  expect(bearerToken('Bearer a b')).toBeUndefined();
});
