import type { EventStats, Page, Ticket } from './api';
import {
  describeAction,
  describeFigures,
  gateLabel,
  gateRows,
  latestUpdate,
  mergeTickets,
  newerTicket,
  newestAnswers,
  offerUndo,
  readChanges,
  reasonFromField,
  ticketGate,
  type ChangesMark,
  updatedSince,
} from './events.format';

const stats = (overrides: Partial<EventStats> = {}): EventStats => ({
  event_id: 'e1',
  tickets: { total: 3, issued: 1, validated: 2 },
  gates: [],
  rejected_duplicates: 0,
  as_of: '2025-06-01T20:00:00.000Z',
  ...overrides,
});

const ticket = (overrides: Partial<Ticket> = {}): Ticket => ({
  id: 't1',
  event_id: 'e1',
  status: 'issued',
  holder_name: null,
  metadata: {},
  validated_at: null,
  validator_id: null,
  gate: null,
  created_at: '2025-06-01T18:00:00.000Z',
  updated_at: '2025-06-01T18:00:00.000Z',
  ...overrides,
});

describe('figures per gate', () => {
  test('one row per gate, named gates in order, validations without a gate last as "(no gate)"', () => {
    const gates = [
      { gate: 'south', validated: 4 },
      { gate: null, validated: 2 },
      { gate: 'north-1', validated: 7 },
      { gate: 'north-10', validated: 1 },
    ];
    expect(gateRows(stats({ gates }))).toEqual([
      { gate: 'north-1', validated: 7 },
      { gate: 'north-10', validated: 1 },
      { gate: 'south', validated: 4 },
      { gate: '(no gate)', validated: 2 },
    ]);
    expect(gateRows(stats({ gates: [{ gate: null, validated: 1 }] }))).toEqual([{ gate: '(no gate)', validated: 1 }]);
    expect(gateRows(stats())).toEqual([]);
  });

  test('the figures in one sentence, singular and plural', () => {
    expect(describeFigures(stats({ rejected_duplicates: 1 }))).toBe('2 of 3 tickets validated, 1 issued, 1 rejected duplicate');
    expect(describeFigures(stats({ tickets: { total: 1, issued: 1, validated: 0 } }))).toBe('0 of 1 ticket validated, 1 issued, 0 rejected duplicates');
  });

  test('a gate of null reads "(no gate)"; a named gate as it is', () => {
    expect(gateLabel(null)).toBe('(no gate)');
    expect(gateLabel('north-1')).toBe('north-1');
  });
});

describe('tickets and check-ins', () => {
  test('a validated ticket shows its gate or "(no gate)"; an issued one a dash', () => {
    expect(ticketGate(ticket({ status: 'validated', gate: 'north-1' }))).toBe('north-1');
    expect(ticketGate(ticket({ status: 'validated', gate: null }))).toBe('(no gate)');
    expect(ticketGate(ticket())).toBe('—');
  });

  test('actions in words', () => {
    expect(describeAction('validated')).toBe('validated');
    expect(describeAction('unvalidated')).toBe('unvalidated');
    expect(describeAction('rejected_duplicate')).toBe('rejected duplicate');
  });
});

describe('the reason of an undo', () => {
  test('is required: blank or only spaces is refused before any request', () => {
    for (const blank of ['', '   ', '\n\t']) expect(reasonFromField(blank)).toEqual({ problem: expect.stringMatching(/reason/) });
  });

  test('is 1-500 characters, counted as Unicode code points, without surrounding spaces', () => {
    expect(reasonFromField('  wrong ticket scanned ')).toEqual({ reason: 'wrong ticket scanned' });
    expect(reasonFromField('x')).toEqual({ reason: 'x' });
    expect(reasonFromField('x'.repeat(500))).toEqual({ reason: 'x'.repeat(500) });
    // 500 emoji are 1,000 UTF-16 units and still 500 characters.
    expect(reasonFromField('🎫'.repeat(500))).toEqual({ reason: '🎫'.repeat(500) });
    expect(reasonFromField('x'.repeat(501))).toEqual({ problem: expect.stringMatching(/501 characters.*at most 500/) });
  });

  test('the form is offered for a validated ticket, and kept while a reason is typed after the ticket changed', () => {
    expect(offerUndo(ticket({ status: 'validated' }), '')).toBe(true);
    expect(offerUndo(ticket(), '')).toBe(false);
    expect(offerUndo(ticket(), '  ')).toBe(false);
    expect(offerUndo(ticket(), 'wrong ticket')).toBe(true);
  });
});

describe('changed tickets (updated_since)', () => {
  const a = ticket({ id: 'a', updated_at: '2025-06-01T18:00:00.000Z' });
  const b = ticket({ id: 'b', updated_at: '2025-06-01T18:05:00.000Z' });

  test('the latest update seen, starting from what was seen before', () => {
    expect(latestUpdate([a, b], a.updated_at)).toBe(b.updated_at);
    expect(latestUpdate([b, a], a.updated_at)).toBe(b.updated_at);
    expect(latestUpdate([a], b.updated_at)).toBe(b.updated_at);
    expect(latestUpdate([], a.updated_at)).toBe(a.updated_at);
  });

  test('changes are asked from 5 s before the latest seen (the margin the API reference asks for)', () => {
    expect(updatedSince('2025-06-01T18:05:00.000Z')).toBe('2025-06-01T18:04:55.000Z');
    expect(updatedSince('2025-01-01T00:00:03.000Z')).toBe('2024-12-31T23:59:58.000Z');
  });

  /** The API's `updated_since` list over `tickets`: changed after `since`, in (updated_at, id) order, pages of 100. */
  const changesOf =
    (tickets: () => Ticket[]) =>
    async (since: string, cursor: string | null): Promise<Page<Ticket>> => {
      const key = (t: Ticket) => `${t.updated_at}|${t.id}`;
      const listed = tickets()
        .filter((t) => t.updated_at > since && (cursor === null || key(t) > cursor))
        .sort((x, y) => (key(x) < key(y) ? -1 : 1));
      const page = listed.slice(0, 100);
      return { data: page, next_cursor: listed.length > 100 ? key(page.at(-1)!) : null };
    };
  const at = (ms: number) => new Date(Date.parse('2025-06-01T18:00:00.000Z') + ms).toISOString();

  test('a change stamped before the newest one read but committed after that read is read the next time', async () => {
    const committed = [ticket({ id: 'a', updated_at: at(0) }), ticket({ id: 'b', updated_at: at(10) })];
    const first = await readChanges(
      { latest: at(-1_000), stopped: null },
      changesOf(() => committed),
    );
    expect(first.changed.map((t) => t.id)).toEqual(['a', 'b']);
    expect(first.mark).toEqual({ latest: at(10), stopped: null });

    committed.push(ticket({ id: 'late', updated_at: at(5) }));
    const second = await readChanges(
      first.mark,
      changesOf(() => committed),
    );
    expect(second.changed.map((t) => t.id)).toContain('late');
  });

  test('more changes inside the margin than one read holds: the reads go on where they stopped and reach the newer ones', async () => {
    // A 600-scan upload just before the figures' as_of, then one validation after it.
    const changes = Array.from({ length: 600 }, (_, n) => ticket({ id: `s${String(n).padStart(3, '0')}`, updated_at: at(-2_000 + n) }));
    changes.push(ticket({ id: 'newer', updated_at: at(1_000) }));
    let mark: ChangesMark = { latest: at(0), stopped: null };
    const read: string[] = [];
    for (let tick = 0; tick < 3 && !read.includes('newer'); tick++) {
      const result = await readChanges(
        mark,
        changesOf(() => changes),
      );
      read.push(...result.changed.map((t) => t.id));
      mark = result.mark;
    }
    expect(read).toContain('newer');
    expect(new Set(read).size).toBe(601);
    expect(mark).toEqual({ latest: at(1_000), stopped: null });
  });

  test('changed tickets replace the shown ones in place; unchanged, older and unknown ones change nothing', () => {
    const validated = ticket({ ...b, status: 'validated', gate: 'north-1', updated_at: '2025-06-01T18:06:00.000Z' });
    const stranger = ticket({ id: 'c', updated_at: '2025-06-01T18:07:00.000Z' });
    expect(mergeTickets([a, b], [validated, stranger, a])).toEqual({ tickets: [a, validated], updated: [validated], added: [] });
    // An answer older than what is shown (a slow read) is dropped.
    expect(mergeTickets([a, validated], [b])).toEqual({ tickets: [a, validated], updated: [], added: [] });
  });

  test('a page read before a change seen meanwhile shows the newer version', () => {
    const validated = ticket({ ...a, status: 'validated', updated_at: '2025-06-01T18:06:00.000Z' });
    expect(newerTicket(validated, a)).toBe(validated);
    expect(newerTicket(a, validated)).toBe(validated);
    expect(newerTicket(undefined, a)).toBe(a);
    expect(newerTicket({ ...a }, a)).toBe(a);
  });

  test('a ticket not shown is appended, oldest first, only when the whole list is shown and it matches the filter', () => {
    const later = ticket({ id: 'd', created_at: '2025-06-01T19:00:00.000Z', updated_at: '2025-06-01T19:00:00.000Z' });
    const earlier = ticket({ id: 'c', created_at: '2025-06-01T18:30:00.000Z', updated_at: '2025-06-01T19:01:00.000Z', status: 'validated' });
    expect(mergeTickets([a], [later, earlier], () => true)).toEqual({ tickets: [a, earlier, later], updated: [], added: [earlier, later] });
    expect(mergeTickets([a], [later, earlier], (t) => t.status === 'issued')).toEqual({ tickets: [a, later], updated: [], added: [later] });
    expect(mergeTickets([a], [later, earlier]).added).toEqual([]);
  });
});

test('answers of reads started earlier than one already shown are dropped', () => {
  const reads = newestAnswers();
  const first = reads.begin();
  const second = reads.begin();
  expect(reads.accept(second)).toBe(true);
  expect(reads.accept(first)).toBe(false);
  const third = reads.begin();
  expect(reads.accept(third)).toBe(true);
  expect(reads.accept(third)).toBe(true);
});
