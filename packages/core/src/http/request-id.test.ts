import { requestIdFrom } from './request-id';

test('a client x-request-id of 1-128 visible ASCII characters is kept, anything else replaced', () => {
  expect(requestIdFrom('abc-123')).toBe('abc-123');
  expect(requestIdFrom('x'.repeat(128))).toBe('x'.repeat(128));
  for (const bad of ['', 'x'.repeat(129), 'has space', 'ünïcode', undefined, ['a', 'b']]) {
    const id = requestIdFrom(bad);
    expect(id).not.toBe(bad);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
  }
});
