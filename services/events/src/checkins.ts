/**
 * Check-in at a gate (contract section 15) as plain functions. Offline scans: what one upload decides. The store
 * claims each scan_id and locks the scanned tickets; these functions then say, for the claimed
 * scans, which validate, which are refused duplicates and what is recorded, without a database.
 */

export type ScanStatus = 'validated' | 'already_validated' | 'not_found' | 'wrong_event';

/** Who validates and where: an online validation's body, or a scan's. `eventId`: the event whose entrance scans, when said. */
export interface Attempt {
  eventId: string | null;
  gate: string | null;
  validatorId: string | null;
}

export interface ScanInput {
  scanId: string;
  ticketId: string;
  scannedAt: Date;
  gate: string | null;
  validatorId: string | null;
}

/** A ticket as the upload's transaction locked it. */
export interface LockedTicket {
  id: string;
  eventId: string;
  status: 'issued' | 'validated';
  validatedAt: Date | null;
  validatorId: string | null;
  gate: string | null;
}

/** A scan's result as recorded the first time its scan_id arrived; a replay answers it unchanged. */
export interface ScanResult {
  scanId: string;
  ticketId: string;
  status: ScanStatus;
  validatedAt: Date | null;
  validatorId: string | null;
  gate: string | null;
}

/** A check-in attempt to record: a validation or a refused duplicate, with the attempt's own gate, validator and scan. */
export interface ScanCheckin {
  ticketId: string;
  action: 'validated' | 'rejected_duplicate';
  at: Date;
  gate: string | null;
  validatorId: string | null;
  scanId: string;
}

export interface UploadDecision {
  /** One per claimed scan. */
  results: ScanResult[];
  /** The scans that validate their ticket (one per ticket at most). */
  validations: ScanInput[];
  /** In the order they happened: by `scanned_at`, then request order. */
  checkins: ScanCheckin[];
}

/** The first scan of each scan_id in request order: a scan_id sent twice in one upload is one scan. */
export function firstOfEachScanId(scans: readonly ScanInput[]): ScanInput[] {
  const seen = new Set<string>();
  return scans.filter((scan) => !seen.has(scan.scanId) && seen.add(scan.scanId));
}

/**
 * Decides the claimed scans of one upload to `eventId` against the tickets as locked. Scans are
 * taken by `scanned_at` (request order breaks ties), so of the scans of one ticket the earliest
 * validates it while it is issued, and every later one is a refused duplicate carrying the
 * validation that stands. A ticket missing from `tickets` is not found (unknown, or another
 * workspace's); a ticket of another event is `wrong_event` and records nothing.
 */
export function decideUpload(eventId: string, claimed: readonly ScanInput[], tickets: ReadonlyMap<string, LockedTicket>): UploadDecision {
  const state = new Map<string, LockedTicket>();
  const results = new Map<ScanInput, ScanResult>();
  const validations: ScanInput[] = [];
  const checkins: ScanCheckin[] = [];
  const byTime = claimed.map((scan, index) => ({ scan, index })).sort((a, b) => a.scan.scannedAt.getTime() - b.scan.scannedAt.getTime() || a.index - b.index);

  for (const { scan } of byTime) {
    const ticket = state.get(scan.ticketId) ?? tickets.get(scan.ticketId);
    const refused = (status: ScanStatus): ScanResult => ({
      scanId: scan.scanId,
      ticketId: scan.ticketId,
      status,
      validatedAt: null,
      validatorId: null,
      gate: null,
    });
    if (!ticket) {
      results.set(scan, refused('not_found'));
      continue;
    }
    if (ticket.eventId !== eventId) {
      results.set(scan, refused('wrong_event'));
      continue;
    }
    const attempt = { ticketId: ticket.id, at: scan.scannedAt, gate: scan.gate, validatorId: scan.validatorId, scanId: scan.scanId };
    if (ticket.status === 'issued') {
      state.set(ticket.id, { ...ticket, status: 'validated', validatedAt: scan.scannedAt, validatorId: scan.validatorId, gate: scan.gate });
      validations.push(scan);
      checkins.push({ ...attempt, action: 'validated' });
      results.set(scan, {
        scanId: scan.scanId,
        ticketId: ticket.id,
        status: 'validated',
        validatedAt: scan.scannedAt,
        validatorId: scan.validatorId,
        gate: scan.gate,
      });
    } else {
      checkins.push({ ...attempt, action: 'rejected_duplicate' });
      results.set(scan, {
        scanId: scan.scanId,
        ticketId: ticket.id,
        status: 'already_validated',
        validatedAt: ticket.validatedAt,
        validatorId: ticket.validatorId,
        gate: ticket.gate,
      });
    }
  }
  return { results: claimed.map((scan) => results.get(scan)!), validations, checkins };
}

/** How many validations and refused duplicates each gate gains ('' stands for no gate), in gate order. */
export function gateCountChanges(checkins: readonly Pick<ScanCheckin, 'action' | 'gate'>[]): { gate: string; validated: number; rejectedDuplicates: number }[] {
  const byGate = new Map<string, { gate: string; validated: number; rejectedDuplicates: number }>();
  for (const checkin of checkins) {
    const gate = checkin.gate ?? '';
    const entry = byGate.get(gate) ?? { gate, validated: 0, rejectedDuplicates: 0 };
    if (checkin.action === 'validated') entry.validated++;
    else entry.rejectedDuplicates++;
    byGate.set(gate, entry);
  }
  return [...byGate.values()].sort((a, b) => (a.gate < b.gate ? -1 : a.gate > b.gate ? 1 : 0));
}

/** An event's live figures as its counters hold them at `asOf`. */
export interface EventFigures {
  ticketsTotal: number;
  rejectedDuplicates: number;
  /** Gates with at least one current validation; '' stands for no gate. */
  gates: { gate: string; validated: number }[];
  asOf: Date;
}

/** A bucket's check-ins at one gate ('' for none; null: the window has no check-in at all). */
export interface CheckinBucketRow {
  start: Date;
  gate: string | null;
  validated: number;
  unvalidated: number;
  rejectedDuplicates: number;
}
