import { ConnectorError } from './connectors';
import { isPrivateAddress } from './connectors/network';
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

describe('isPrivateAddress', () => {
  test.each(['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '0.0.0.0', '::1', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1'])(
    '%s is refused',
    (address) => expect(isPrivateAddress(address)).toBe(true),
  );
  test.each(['93.184.216.34', '8.8.8.8', '2606:4700::1111'])('%s is public', (address) => expect(isPrivateAddress(address)).toBe(false));
});
