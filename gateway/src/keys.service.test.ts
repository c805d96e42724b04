import { announceKeyChanges } from './keys.service';

const keys = [
  { id: 'k1', tokenHash: 'h1' },
  { id: 'k2', tokenHash: 'h2' },
];

test('a key change drops the keys from the cache of the instance that made it, and is published for the others', async () => {
  const published: string[] = [];
  const evicted: string[] = [];
  const announced = await announceKeyChanges(
    { publisher: { publish: async (message) => void published.push(message.token_hash) }, cache: { evict: (hash) => void evicted.push(hash) } },
    keys,
  );
  expect(announced).toBe(true);
  expect(published).toEqual(['h1', 'h2']);
  expect(evicted).toEqual(['h1', 'h2']);
});

test('with Redis down the change is not announced, but this instance still drops the keys at once (one warning line)', async () => {
  const evicted: string[] = [];
  const warn = jest.fn();
  const announced = await announceKeyChanges(
    {
      publisher: { publish: () => Promise.reject(new Error('Connection is closed.')) },
      cache: { evict: (hash) => void evicted.push(hash) },
      logger: { warn },
    },
    keys,
  );
  expect(announced).toBe(false);
  expect(evicted).toEqual(['h1', 'h2']);
  expect(warn).toHaveBeenCalledTimes(1);
  expect(warn.mock.calls[0][0]).toMatchObject({ key_id: 'k1', keys_not_announced: 2 });
});
