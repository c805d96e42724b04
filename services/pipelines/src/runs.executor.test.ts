import { ConnectorError } from './connectors';
import { validateRecords } from './runs.executor';

describe('validateRecords', () => {
  test('string and integer ids become the destination key', () => {
    expect(validateRecords([{ id: 'a' }, { id: 7, x: 1 }], 0)).toEqual([
      { id: 'a', data: { id: 'a' } },
      { id: '7', data: { id: 7, x: 1 } },
    ]);
  });

  test.each([[[null]], [[[1, 2]]], [[{ name: 'no id' }]], [[{ id: '' }]], [[{ id: 1.5 }]], [[{ id: { nested: true } }]]])(
    'a record that is not an object with an id fails without retry: %j',
    (batch) => {
      expect(() => validateRecords(batch as never, 10)).toThrow(ConnectorError);
      try {
        validateRecords(batch as never, 10);
      } catch (err) {
        expect(err).toMatchObject({ code: 'invalid_record', retryable: false, message: expect.stringContaining('record 11') });
      }
    },
  );
});
