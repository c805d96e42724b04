import { apiKeysLimitReached, rollAddsHeldKey } from './keys.limit';

describe('apiKeysLimitReached', () => {
  test('refuses one more key once the workspace holds the limit, or more (a lowered limit removes nothing)', () => {
    expect(apiKeysLimitReached(2, 3)).toBeUndefined();
    expect(apiKeysLimitReached(3, 3)).toEqual({ kind: 'quota_reached', quota: 'api_keys', limit: 3 });
    expect(apiKeysLimitReached(5, 3)).toEqual({ kind: 'quota_reached', quota: 'api_keys', limit: 3 });
  });

  test('a limit of 0 refuses every key', () => {
    expect(apiKeysLimitReached(0, 0)).toEqual({ kind: 'quota_reached', quota: 'api_keys', limit: 0 });
  });
});

describe('rollAddsHeldKey', () => {
  test('a roll replaces a key never rolled (adds nothing); rolling a key an earlier roll replaced adds one', () => {
    expect(rollAddsHeldKey({ rolledAt: null })).toBe(false);
    expect(rollAddsHeldKey({ rolledAt: new Date() })).toBe(true);
  });
});
