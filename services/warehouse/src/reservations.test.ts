import { expiresAt, isDue, reservationAt, type ReservationState } from './reservations';

const created = new Date('2024-12-04T08:00:00.000Z');
const active: ReservationState = { status: 'active', expiresAt: expiresAt(created, 900), updatedAt: created };

describe('a reservation at an instant (contract section 18)', () => {
  test('expires expires_in_seconds after its creation', () => {
    expect(active.expiresAt.toISOString()).toBe('2024-12-04T08:15:00.000Z');
  });

  test('is active before expires_at and expired from that instant on, changed at expires_at', () => {
    expect(reservationAt(active, new Date('2024-12-04T08:14:59.999Z'))).toBe(active);
    expect(isDue(active, new Date('2024-12-04T08:14:59.999Z'))).toBe(false);
    for (const now of ['2024-12-04T08:15:00.000Z', '2024-12-05T00:00:00.000Z']) {
      expect(isDue(active, new Date(now))).toBe(true);
      expect(reservationAt(active, new Date(now))).toEqual({ status: 'expired', expiresAt: active.expiresAt, updatedAt: active.expiresAt });
    }
  });

  test('an ended reservation stays as it ended, whatever the time', () => {
    const later = new Date('2024-12-31T00:00:00.000Z');
    for (const status of ['committed', 'released', 'expired'] as const) {
      const ended = { ...active, status, updatedAt: new Date('2024-12-04T08:05:00.000Z') };
      expect(isDue(ended, later)).toBe(false);
      expect(reservationAt(ended, later)).toBe(ended);
    }
  });
});
