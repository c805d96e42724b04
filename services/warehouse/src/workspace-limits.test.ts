import { DEFAULT_WORKSPACE_LIMITS, MAX_QUOTA_VALUE, parseConfig } from '@platform/core';
import { WarehouseConfig, warehouseLimits } from './config';
import { reservationAdmission } from './workspace-limits';

const REQUIRED = { PLATFORM_INTERNAL_SECRET: 'x'.repeat(32) };

describe('WAREHOUSE_WORKSPACE_MAX_*', () => {
  test("unset: core's defaults (200,000 items, 1,000 locations, 20,000 active reservations)", () => {
    expect(warehouseLimits(parseConfig(WarehouseConfig, REQUIRED))).toEqual({
      items: DEFAULT_WORKSPACE_LIMITS.items,
      locations: DEFAULT_WORKSPACE_LIMITS.locations,
      active_reservations: DEFAULT_WORKSPACE_LIMITS.active_reservations,
    });
  });

  test('whole numbers from 0 to MAX_QUOTA_VALUE', () => {
    const config = parseConfig(WarehouseConfig, {
      ...REQUIRED,
      WAREHOUSE_WORKSPACE_MAX_ITEMS: '0',
      WAREHOUSE_WORKSPACE_MAX_LOCATIONS: String(MAX_QUOTA_VALUE),
      WAREHOUSE_WORKSPACE_MAX_ACTIVE_RESERVATIONS: '3',
    });
    expect(warehouseLimits(config)).toEqual({ items: 0, locations: MAX_QUOTA_VALUE, active_reservations: 3 });
  });

  test.each([['-1'], ['1.5'], [''], ['ten'], [String(MAX_QUOTA_VALUE + 1)], ['1e3']])('%j stops the process with a line naming the variable', (value) => {
    expect(() => parseConfig(WarehouseConfig, { ...REQUIRED, WAREHOUSE_WORKSPACE_MAX_ACTIVE_RESERVATIONS: value })).toThrow(
      /WAREHOUSE_WORKSPACE_MAX_ACTIVE_RESERVATIONS/,
    );
  });
});

describe('reservationAdmission', () => {
  const connections = 100;

  test('far from the limit (count + connections below it) a reservation is admitted under the shared lock', () => {
    expect(reservationAdmission(0, 20_000, connections, false)).toBe('admit');
    expect(reservationAdmission(19_899, 20_000, connections, false)).toBe('admit');
  });

  test('within `connections` of the limit it starts again under the exclusive lock, where it is admitted below the limit', () => {
    expect(reservationAdmission(19_900, 20_000, connections, false)).toBe('lock');
    expect(reservationAdmission(19_999, 20_000, connections, false)).toBe('lock');
    expect(reservationAdmission(0, 5, connections, false)).toBe('lock');
    expect(reservationAdmission(19_999, 20_000, connections, true)).toBe('admit');
    expect(reservationAdmission(4, 5, connections, true)).toBe('admit');
  });

  test('at or past the limit it is refused under either lock; a limit of 0 refuses every one', () => {
    for (const locked of [false, true]) {
      expect(reservationAdmission(20_000, 20_000, connections, locked)).toBe('refuse');
      expect(reservationAdmission(5, 3, connections, locked)).toBe('refuse');
      expect(reservationAdmission(0, 0, connections, locked)).toBe('refuse');
    }
  });
});
