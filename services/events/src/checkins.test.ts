import { decideUpload, firstOfEachScanId, gateCountChanges, type LockedTicket, type ScanInput } from './checkins';

const EVENT = 'e0000000-0000-4000-8000-000000000000';
const OTHER_EVENT = 'e1111111-1111-4111-8111-111111111111';

const at = (minute: number) => new Date(Date.UTC(2025, 5, 1, 18, minute));
const scan = (scanId: string, ticketId: string, minute: number, gate: string | null = null): ScanInput => ({
  scanId,
  ticketId,
  scannedAt: at(minute),
  gate,
  validatorId: null,
});
const issued = (id: string, eventId = EVENT): LockedTicket => ({ id, eventId, status: 'issued', validatedAt: null, validatorId: null, gate: null });

describe('firstOfEachScanId', () => {
  test('keeps the first scan of each scan_id in request order', () => {
    const scans = [scan('a', 't1', 5), scan('b', 't2', 1), scan('a', 't3', 0)];
    expect(firstOfEachScanId(scans)).toEqual([scans[0], scans[1]]);
  });
});

describe('decideUpload', () => {
  test("the earliest scan of a ticket validates; later ones are refused duplicates carrying that validation, in the request's order of results", () => {
    const scans = [scan('late', 't1', 9, 'b'), scan('early', 't1', 2, 'a'), scan('tie', 't1', 2, 'c')];
    const decision = decideUpload(EVENT, scans, new Map([['t1', issued('t1')]]));
    expect(decision.results.map((r) => [r.scanId, r.status, r.gate, r.validatedAt])).toEqual([
      ['late', 'already_validated', 'a', at(2)],
      ['early', 'validated', 'a', at(2)],
      ['tie', 'already_validated', 'a', at(2)],
    ]);
    expect(decision.validations).toEqual([scans[1]]);
    expect(decision.checkins.map((c) => [c.scanId, c.action, c.gate])).toEqual([
      ['early', 'validated', 'a'],
      ['tie', 'rejected_duplicate', 'c'],
      ['late', 'rejected_duplicate', 'b'],
    ]);
  });

  test('a ticket validated before the upload refuses every scan with the standing validation', () => {
    const standing: LockedTicket = { ...issued('t1'), status: 'validated', validatedAt: at(0), validatorId: 'v', gate: 'north-1' };
    const decision = decideUpload(EVENT, [scan('s', 't1', 1, 'south')], new Map([['t1', standing]]));
    expect(decision.results[0]).toEqual({ scanId: 's', ticketId: 't1', status: 'already_validated', validatedAt: at(0), validatorId: 'v', gate: 'north-1' });
    expect(decision.validations).toEqual([]);
    expect(decision.checkins).toEqual([{ ticketId: 't1', action: 'rejected_duplicate', at: at(1), gate: 'south', validatorId: null, scanId: 's' }]);
  });

  test('unknown tickets are not_found and tickets of another event wrong_event: nothing recorded for them', () => {
    const decision = decideUpload(EVENT, [scan('x', 'missing', 1), scan('y', 't2', 1)], new Map([['t2', issued('t2', OTHER_EVENT)]]));
    expect(decision.results.map((r) => [r.status, r.validatedAt, r.gate])).toEqual([
      ['not_found', null, null],
      ['wrong_event', null, null],
    ]);
    expect(decision.checkins).toEqual([]);
  });
});

describe('gateCountChanges', () => {
  test('sums validations and refusals per gate, no gate as "", in gate order', () => {
    const decision = decideUpload(
      EVENT,
      [scan('1', 't1', 1, 'south'), scan('2', 't1', 2, 'north'), scan('3', 't2', 1), scan('4', 't3', 1, 'south')],
      new Map(['t1', 't2', 't3'].map((id) => [id, issued(id)])),
    );
    expect(gateCountChanges(decision.checkins)).toEqual([
      { gate: '', validated: 1, rejectedDuplicates: 0 },
      { gate: 'north', validated: 0, rejectedDuplicates: 1 },
      { gate: 'south', validated: 2, rejectedDuplicates: 0 },
    ]);
  });
});
