import { newIdempotencyKey } from './idempotency-key';

test('a version-4 UUID, also where crypto.randomUUID is missing (a page on plain http)', () => {
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  expect(newIdempotencyKey()).toMatch(uuid);
  const randomUUID = Object.getOwnPropertyDescriptor(globalThis.crypto, 'randomUUID');
  Object.defineProperty(globalThis.crypto, 'randomUUID', { value: undefined, configurable: true });
  try {
    const keys = new Set(Array.from({ length: 50 }, () => newIdempotencyKey()));
    expect(keys.size).toBe(50);
    for (const key of keys) expect(key).toMatch(uuid);
  } finally {
    if (randomUUID) Object.defineProperty(globalThis.crypto, 'randomUUID', randomUUID);
  }
});
