// What the Warehouse tab says about locations, levels and reservations: plain functions without
// the DOM, so they are tested alone.
import type { Location, Reservation, StockLevel } from './api.js';

/** The level of stock held at no location (contract section 18: `location_id: null`). */
export const UNASSIGNED = '(unassigned)';

/** A location as the page names it: its code, or the unassigned level; an id not (yet) listed by its first 8 characters. */
export function locationLabel(id: string | null, locations: ReadonlyMap<string, Location>): string {
  if (id === null) return UNASSIGNED;
  return locations.get(id)?.code ?? id.slice(0, 8);
}

/** An item's levels in one line, in the API's order: `(unassigned) 2 · AISLE 6 (1 reserved)`; no level: `none`. */
export function levelsLine(levels: readonly StockLevel[], locations: ReadonlyMap<string, Location>): string {
  if (levels.length === 0) return 'none';
  return levels
    .map((level) => `${locationLabel(level.location_id, locations)} ${level.on_hand}${level.reserved ? ` (${level.reserved} reserved)` : ''}`)
    .join(' · ');
}

/** The value of a location `<select>`: '' stands for the unassigned level (null in the API). */
export const locationValue = (id: string | null): string => id ?? '';
export const locationFromValue = (value: string): string | null => (value === '' ? null : value);

/** The options of a location `<select>`: the unassigned level first, then every location by code. */
export function locationOptions(locations: ReadonlyMap<string, Location>): { value: string; label: string }[] {
  const listed = [...locations.values()].sort((a, b) => a.code.localeCompare(b.code, 'en'));
  return [{ value: '', label: UNASSIGNED }, ...listed.map((l) => ({ value: l.id, label: `${l.code} — ${l.name}` }))];
}

/**
 * A number field's value as the API is sent it: the number typed, an empty optional field left out.
 * Anything else the field holds is sent as typed: the API's own rule (and its words) judges it.
 */
export function numberField(value: string): number | undefined {
  const trimmed = value.trim();
  return trimmed === '' ? undefined : Number(trimmed);
}

/** An optional text field: left out when empty, else as typed. */
export function textField(value: string): string | undefined {
  return value === '' ? undefined : value;
}

/** Only an active reservation can be committed or released (contract section 18). */
export const settleable = (reservation: Pick<Reservation, 'status'>): boolean => reservation.status === 'active';

/** What the status line says after a write on a reservation. */
export function describeReservation(reservation: Pick<Reservation, 'quantity' | 'status' | 'reference'>, label: string): string {
  const of = reservation.reference ? ` (${reservation.reference})` : '';
  return `Reservation of ${reservation.quantity} at ${label}${of} ${reservation.status}.`;
}
