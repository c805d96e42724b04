import { newEventId } from './outbox';

test('event ids are evt_ + 26 Crockford characters and sort by creation time', () => {
  const a = newEventId(1_700_000_000_000);
  const b = newEventId(1_700_000_000_001);
  expect(a).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
  expect(a < b).toBe(true);
  expect(new Set(Array.from({ length: 1000 }, () => newEventId())).size).toBe(1000);
});
