import type { Location } from './api';
import {
  describeReservation,
  levelsLine,
  locationFromValue,
  locationLabel,
  locationOptions,
  locationValue,
  numberField,
  settleable,
  textField,
  UNASSIGNED,
} from './warehouse.format';

const AISLE = '11111111-1111-4111-8111-111111111111';
const SHOP = '22222222-2222-4222-8222-222222222222';
const location = (id: string, code: string, name: string): Location => ({ id, code, name, created_at: '2024-12-01T09:30:00.000Z' });
const locations = new Map([
  [SHOP, location(SHOP, 'SHOP', 'Shop floor')],
  [AISLE, location(AISLE, 'AISLE', 'Aisle 3')],
]);

describe('locations', () => {
  test('a location is named by its code, the null level as unassigned, an id not listed by its first 8 characters', () => {
    expect(locationLabel(AISLE, locations)).toBe('AISLE');
    expect(locationLabel(null, locations)).toBe(UNASSIGNED);
    expect(locationLabel('33333333-3333-4333-8333-333333333333', locations)).toBe('33333333');
  });

  test("a select's options: the unassigned level first (value ''), then the locations by code; '' stands for null both ways", () => {
    expect(locationOptions(locations)).toEqual([
      { value: '', label: UNASSIGNED },
      { value: AISLE, label: 'AISLE — Aisle 3' },
      { value: SHOP, label: 'SHOP — Shop floor' },
    ]);
    expect(locationFromValue(locationValue(null))).toBeNull();
    expect(locationFromValue(locationValue(SHOP))).toBe(SHOP);
  });
});

describe('levelsLine', () => {
  test("an item's levels in the API's order, the reserved units beside a level that holds some", () => {
    expect(
      levelsLine(
        [
          { location_id: null, on_hand: 2, reserved: 0, available: 2 },
          { location_id: AISLE, on_hand: 6, reserved: 1, available: 5 },
        ],
        locations,
      ),
    ).toBe(`${UNASSIGNED} 2 · AISLE 6 (1 reserved)`);
    expect(levelsLine([], locations)).toBe('none');
  });
});

describe('form fields', () => {
  test('an empty optional field is left out; anything typed is sent as typed, for the API to judge', () => {
    expect(numberField('')).toBeUndefined();
    expect(numberField(' 900 ')).toBe(900);
    expect(numberField('1.5')).toBe(1.5);
    expect(textField('')).toBeUndefined();
    expect(textField(' Order 7 ')).toBe(' Order 7 ');
  });
});

describe('reservations', () => {
  test('only an active reservation offers commit and release', () => {
    expect(settleable({ status: 'active' })).toBe(true);
    for (const status of ['committed', 'released', 'expired'] as const) expect(settleable({ status })).toBe(false);
  });

  test('the status line names the quantity, the location, the reference and the status', () => {
    expect(describeReservation({ quantity: 3, status: 'committed', reference: 'Order 7' }, 'SHOP')).toBe('Reservation of 3 at SHOP (Order 7) committed.');
    expect(describeReservation({ quantity: 1, status: 'released', reference: null }, UNASSIGNED)).toBe(`Reservation of 1 at ${UNASSIGNED} released.`);
  });
});
