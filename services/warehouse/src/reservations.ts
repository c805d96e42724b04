/**
 * Reservations (contract section 18) as plain functions: when one expires and what it is at an
 * instant. The store holds the rows and the conditional updates; these say how a row reads.
 */

/** `expires_in_seconds` when the request leaves it out. */
export const DEFAULT_EXPIRES_IN_SECONDS = 900;
export const MIN_EXPIRES_IN_SECONDS = 60;
/** 30 days. */
export const MAX_EXPIRES_IN_SECONDS = 2_592_000;

export const RESERVATION_STATUSES = ['active', 'committed', 'released', 'expired'] as const;
export type ReservationStatus = (typeof RESERVATION_STATUSES)[number];

/** What the expiry rule needs of a stored reservation. */
export interface ReservationState {
  status: ReservationStatus;
  expiresAt: Date;
  updatedAt: Date;
}

export function expiresAt(now: Date, expiresInSeconds: number): Date {
  return new Date(now.getTime() + expiresInSeconds * 1000);
}

/** An active reservation whose `expires_at` has come holds nothing from that instant on, swept or not. */
export function isDue(reservation: ReservationState, now: Date): boolean {
  return reservation.status === 'active' && reservation.expiresAt.getTime() <= now.getTime();
}

/**
 * The reservation as it is at `now`: a due one reads `expired`, changed at its `expires_at`,
 * exactly as the sweeper (or the next write on its item) will store it, so a read before and a
 * read after the sweep show the same object.
 */
export function reservationAt<R extends ReservationState>(reservation: R, now: Date): R {
  return isDue(reservation, now) ? { ...reservation, status: 'expired', updatedAt: reservation.expiresAt } : reservation;
}
