// Events (contract sections 8 and 15): the workspace's events; an open event's live figures per
// gate and its tickets, read again every 2 s while the tab shows it; its validations per gate over
// time as a chart; a ticket's check-in history; undoing a validation with a reason.
import { allPages, pageAt, PlatformApiError, type CheckIn, type EventStats, type PlatformEvent, type Ticket, type TicketStatus } from './api.js';
import { badge, busy, byId, cell, clear, h, shortId, time } from './dom.js';
import {
  describeAction,
  describeFigures,
  gateLabel,
  gateRows,
  mergeTickets,
  newerTicket,
  newestAnswers,
  NO_GATE,
  offerUndo,
  REASON_MAX,
  reasonFromField,
  readChanges,
  ticketGate,
  type ChangesMark,
} from './events.format.js';
import { setWorkspaceAddress } from './address.js';
import { announce, clearError, showError } from './messages.js';
import type { Detail } from './route.format.js';
import { seriesChartView, type SeriesChartView } from './series.chart.js';
import { checkInSeriesChart } from './series.format.js';
import { gateway } from './session.js';

/** How often the open event's figures, its changed tickets and an open history are read again. */
const REFRESH_MS = 2000;
/** Figures shown for an event, in the order of the API's `tickets` object, then the duplicates. */
const FIGURES = [
  ['total', 'Tickets'],
  ['issued', 'Issued'],
  ['validated', 'Validated'],
  ['rejected-duplicates', 'Rejected duplicates'],
] as const;

interface OpenEvent {
  event: PlatformEvent;
  region: HTMLElement;
  figures: Record<(typeof FIGURES)[number][0], HTMLElement>;
  asOf: HTMLElement;
  gatesTable: HTMLElement;
  gatesBody: HTMLTableSectionElement;
  gatesNote: HTMLElement;
  /** The gate rows shown, so a read that changed nothing leaves the table alone. */
  gatesShown: string;
  statsReads: ReturnType<typeof newestAnswers>;
  /** Validations per gate over time, read again when the figures per gate change. */
  chart: SeriesChartView;
  statusFilter: HTMLSelectElement;
  ticketsBody: HTMLTableSectionElement;
  ticketsNote: HTMLElement;
  ticketsMore: HTMLButtonElement;
  /** In the API's order (oldest first), as shown. */
  tickets: Ticket[];
  ticketsCursor: string | null;
  /** Bumped when the list is read again from its first page (a filter change). */
  listing: number;
  /**
   * Where the reads of changed tickets stand: from the `as_of` of the figures read before the first
   * tickets page, then the latest `updated_at` among the changes. Null until the figures were read once.
   */
  changes: ChangesMark | null;
  /** The newest version seen of each changed ticket, so a page read before a change cannot undo it on screen. */
  known: Map<string, Ticket>;
  history?: OpenHistory;
}

interface OpenHistory {
  ticket: Ticket;
  region: HTMLElement;
  summary: HTMLElement;
  body: HTMLTableSectionElement;
  note: HTMLElement;
  /** The entries shown, so a read that changed nothing leaves the table alone. */
  shown: string;
  form: HTMLFormElement;
  reason: HTMLInputElement;
  reads: ReturnType<typeof newestAnswers>;
}

let open: OpenEvent | undefined;
let timer: number | undefined;
/** A refresh is under way: the next one is scheduled when it ends, never beside it. */
let refreshing = false;
/** Whether the Events tab is the one shown: the timer runs only then. */
let tabShown = false;
let loaded = false;
let eventsCursor: string | null = null;
let eventCount = 0;
/** Bumped when the events list is read again, so an older page is dropped. */
let eventsListing = 0;
/** Bumped when the workspace changes, so answers for the previous one are dropped. */
let generation = 0;

const ofEvent = (id: string) => ({ path: { id } });
const ofTicket = ofEvent;
const eventsBody = (): HTMLTableSectionElement => byId<HTMLTableElement>('events-table').tBodies[0]!;
const current = (entry: OpenEvent, at: number): boolean => at === generation && open === entry;

function eventRow(event: PlatformEvent): HTMLTableRowElement {
  const openButton = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      'aria-label': `Open event ${event.name}`,
      onclick: (e: Event) => void openEvent(event, e.currentTarget as HTMLButtonElement),
    },
    'Open',
  );
  return h(
    'tr',
    { 'data-event-id': event.id },
    cell('Name', h('strong', {}, event.name)),
    cell('Starts', time(event.starts_at)),
    cell('Ends', time(event.ends_at)),
    cell('Created', time(event.created_at)),
    cell('', openButton),
  );
}

/** One page (100) of the workspace's events, oldest first. */
async function loadEventsPage(cursor: string | null): Promise<void> {
  const at = generation;
  const listing = eventsListing;
  const page = await gateway((platform) => platform.events.GET('/events', { params: { query: pageAt(cursor) } }));
  if (at !== generation || listing !== eventsListing) return;
  eventsBody().append(...page.data.map(eventRow));
  eventCount += page.data.length;
  eventsCursor = page.next_cursor;
  byId('events-empty').hidden = eventCount > 0;
  byId('events-more').hidden = eventsCursor === null;
}

function resetEventsList(): void {
  eventsListing++;
  eventCount = 0;
  eventsCursor = null;
  clear(eventsBody());
  byId('events-empty').hidden = true;
  byId('events-more').hidden = true;
}

async function reloadEvents(): Promise<void> {
  clearError();
  resetEventsList();
  try {
    await loadEventsPage(null);
    announce(`${eventCount} event${eventCount === 1 ? '' : 's'} shown${eventsCursor ? '; more can be loaded' : ''}.`);
  } catch (err) {
    showError(err, 'Could not list the events');
  }
}

type FigureParts = Pick<OpenEvent, 'figures' | 'asOf' | 'gatesTable' | 'gatesBody' | 'gatesNote'>;
type TicketParts = Pick<OpenEvent, 'statusFilter' | 'ticketsBody' | 'ticketsNote' | 'ticketsMore'>;

function figuresSection(event: PlatformEvent): { section: HTMLElement; parts: FigureParts } {
  const titleId = `event-${event.id}-figures-title`;
  const gatesTitleId = `event-${event.id}-gates-title`;
  const figures = Object.fromEntries(FIGURES.map(([key]) => [key, h('dd', { 'data-figure': key }, '…')])) as OpenEvent['figures'];
  const asOf = h('dd', { 'data-figure': 'as-of' }, '…');
  const gatesBody = h('tbody');
  const gatesNote = h('p', { class: 'hint' });
  const gatesTable = h(
    'div',
    { class: 'table-wrap', hidden: true },
    h(
      'table',
      { class: 'responsive gates', 'aria-labelledby': gatesTitleId },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Gate'), h('th', { scope: 'col' }, 'Validated'))),
      gatesBody,
    ),
  );
  const section = h(
    'section',
    { class: 'figures', 'aria-labelledby': titleId },
    h('h4', { id: titleId }, 'Live figures'),
    h('dl', { class: 'facts' }, ...FIGURES.flatMap(([key, label]) => [h('dt', {}, label), figures[key]]), h('dt', {}, 'As of'), asOf),
    h('h5', { id: gatesTitleId }, 'Validated per gate'),
    gatesTable,
    gatesNote,
  );
  return { section, parts: { figures, asOf, gatesTable, gatesBody, gatesNote } };
}

function ticketsSection(event: PlatformEvent): { section: HTMLElement; parts: TicketParts } {
  const titleId = `event-${event.id}-tickets-title`;
  const filterId = `event-${event.id}-tickets-status`;
  const statusFilter = h(
    'select',
    { id: filterId },
    h('option', { value: '' }, 'All'),
    h('option', { value: 'issued' }, 'Issued'),
    h('option', { value: 'validated' }, 'Validated'),
  );
  const ticketsBody = h('tbody');
  const ticketsNote = h('p', { class: 'hint' }, 'Loading tickets…');
  const ticketsMore = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Load more tickets');
  const section = h(
    'section',
    { class: 'tickets', 'aria-labelledby': titleId },
    h(
      'div',
      { class: 'list-head' },
      h('h4', { id: titleId }, 'Tickets'),
      h('div', { class: 'field inline' }, h('label', { for: filterId }, 'Show'), statusFilter),
    ),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'responsive', 'aria-labelledby': titleId },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ...['Ticket', 'Holder', 'Status', 'Validated', 'Gate', 'Updated'].map((name) => h('th', { scope: 'col' }, name)),
            h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')),
          ),
        ),
        ticketsBody,
      ),
    ),
    ticketsNote,
    ticketsMore,
  );
  return { section, parts: { statusFilter, ticketsBody, ticketsNote, ticketsMore } };
}

function createEventRegion(event: PlatformEvent): OpenEvent {
  const titleId = `event-${event.id}-title`;
  const figures = figuresSection(event);
  const tickets = ticketsSection(event);
  const chart = checkInsChart(event);
  const close = h('button', { type: 'button', class: 'secondary' }, 'Close event');
  const fact = (term: string, value: Node | string) => [h('dt', {}, term), h('dd', {}, value)];
  const region = h(
    'section',
    { class: 'card event', 'aria-labelledby': titleId, 'data-event-id': event.id },
    h('header', {}, h('h3', { id: titleId, tabindex: -1 }, event.name), close),
    h('dl', { class: 'facts' }, ...fact('Id', h('code', {}, event.id)), ...fact('Starts', time(event.starts_at)), ...fact('Ends', time(event.ends_at))),
    figures.section,
    chart.section,
    tickets.section,
  );
  const entry: OpenEvent = {
    event,
    region,
    ...figures.parts,
    ...tickets.parts,
    gatesShown: '',
    statsReads: newestAnswers(),
    chart,
    tickets: [],
    ticketsCursor: null,
    listing: 0,
    changes: null,
    known: new Map(),
  };
  close.addEventListener('click', () => {
    const button = [...eventsBody().rows].find((row) => row.dataset.eventId === event.id)?.querySelector('button');
    closeEvent();
    setWorkspaceAddress('events');
    button?.focus();
  });
  entry.statusFilter.addEventListener('change', () => {
    clearError();
    loadTicketsPage(entry, null).catch((err: unknown) => showError(err, 'Could not list the tickets'));
  });
  entry.ticketsMore.addEventListener('click', () => {
    loadTicketsPage(entry, entry.ticketsCursor).catch((err: unknown) => showError(err, 'Could not list more tickets'));
  });
  return entry;
}

/** The event's validations per gate (GET /events/{id}/stats/series), a series per gate up to 8 and the rest as "other gates". */
function checkInsChart(event: PlatformEvent): SeriesChartView {
  return seriesChartView({
    id: `event-${event.id}-chart`,
    title: 'Validations per gate over time',
    noun: { one: 'validation', many: 'validations' },
    read: async (interval) =>
      checkInSeriesChart(
        await gateway((platform) => platform.events.GET('/events/{id}/stats/series', { params: { ...ofEvent(event.id), query: { interval } } })),
      ),
  });
}

function stopRefresh(): void {
  if (timer !== undefined) window.clearTimeout(timer);
  timer = undefined;
}

function setText(element: HTMLElement, text: string): void {
  if (element.textContent !== text) element.textContent = text;
}

function renderFigures(entry: OpenEvent, stats: EventStats): void {
  setText(entry.figures.total, String(stats.tickets.total));
  setText(entry.figures.issued, String(stats.tickets.issued));
  setText(entry.figures.validated, String(stats.tickets.validated));
  setText(entry.figures['rejected-duplicates'], String(stats.rejected_duplicates));
  entry.asOf.replaceChildren(time(stats.as_of));
  const rows = gateRows(stats);
  const key = JSON.stringify(rows);
  if (key === entry.gatesShown) return;
  entry.gatesShown = key;
  // A validation or an undo counts in the chart's current bucket: it is read again with the figures.
  entry.chart.refresh().catch(() => undefined);
  entry.gatesBody.replaceChildren(
    ...rows.map(({ gate, validated }) =>
      h('tr', { 'data-gate': gate }, cell('Gate', gate === NO_GATE ? h('em', {}, gate) : h('code', {}, gate)), cell('Validated', String(validated))),
    ),
  );
  entry.gatesTable.hidden = rows.length === 0;
  entry.gatesNote.textContent = rows.length === 0 ? 'No ticket is validated now.' : 'Current validations: an undone one no longer counts.';
}

async function refreshFigures(entry: OpenEvent): Promise<EventStats | undefined> {
  const at = generation;
  const read = entry.statsReads.begin();
  const stats = await gateway((platform) => platform.events.GET('/events/{id}/stats', { params: ofEvent(entry.event.id) }));
  if (!current(entry, at) || !entry.statsReads.accept(read)) return undefined;
  renderFigures(entry, stats);
  // Changes are read from the first figures that came: those read before the first tickets page, unless that read failed.
  entry.changes ??= { latest: stats.as_of, stopped: null };
  return stats;
}

function ticketRow(entry: OpenEvent, ticket: Ticket): HTMLTableRowElement {
  const historyOpen = entry.history?.ticket.id === ticket.id;
  return h(
    'tr',
    { 'data-ticket-id': ticket.id, 'data-status': ticket.status },
    cell('Ticket', h('code', { class: 'nowrap', title: ticket.id }, shortId(ticket.id))),
    cell('Holder', ticket.holder_name ?? '—'),
    cell('Status', badge(ticket.status)),
    cell('Validated', time(ticket.validated_at)),
    cell('Gate', ticketGate(ticket)),
    cell('Updated', time(ticket.updated_at)),
    cell(
      '',
      h(
        'button',
        {
          type: 'button',
          class: 'link',
          'aria-label': `${historyOpen ? 'Hide' : 'Show'} the check-ins of ticket ${shortId(ticket.id)}`,
          'aria-expanded': String(historyOpen),
          onclick: () => void toggleHistory(entry, ticket.id),
        },
        historyOpen ? 'Hide check-ins' : 'Check-ins',
      ),
    ),
  );
}

/** Updates one ticket's row in place; keyboard focus on its button stays on the new row. */
function replaceTicketRow(entry: OpenEvent, ticket: Ticket): void {
  const old = [...entry.ticketsBody.rows].find((row) => row.dataset.ticketId === ticket.id);
  if (!old) return;
  const focused = old.contains(document.activeElement);
  const row = ticketRow(entry, ticket);
  old.replaceWith(row);
  if (focused) row.querySelector('button')?.focus();
}

function syncTicketsNote(entry: OpenEvent): void {
  const count = entry.tickets.length;
  const filtered = entry.statusFilter.value !== '';
  entry.ticketsNote.textContent =
    count === 0
      ? filtered
        ? 'No ticket with this status.'
        : 'No ticket yet.'
      : `${count} ticket${count === 1 ? '' : 's'} shown, oldest first${entry.ticketsCursor ? '; more can be loaded' : ''}.`;
  entry.ticketsMore.hidden = entry.ticketsCursor === null;
}

/** One page (100) of the event's tickets, oldest first; from the first page again when `cursor` is null. */
async function loadTicketsPage(entry: OpenEvent, cursor: string | null): Promise<void> {
  const at = generation;
  if (cursor === null) entry.listing++;
  const listing = entry.listing;
  // The filter's options are the ticket statuses, and '' for all.
  const status = (entry.statusFilter.value || undefined) as TicketStatus | undefined;
  const page = await gateway((platform) =>
    platform.events.GET('/events/{id}/tickets', { params: { ...ofEvent(entry.event.id), query: { status, ...pageAt(cursor) } } }),
  );
  if (!current(entry, at) || listing !== entry.listing) return;
  if (cursor === null) {
    entry.tickets = [];
    clear(entry.ticketsBody);
  }
  const tickets = page.data.map((ticket) => newerTicket(entry.known.get(ticket.id), ticket));
  entry.tickets.push(...tickets);
  entry.ticketsBody.append(...tickets.map((ticket) => ticketRow(entry, ticket)));
  entry.ticketsCursor = page.next_cursor;
  syncTicketsNote(entry);
}

/** Puts newer versions of tickets in their rows, the open history's summary and its undo form. */
function applyTickets(entry: OpenEvent, changed: readonly Ticket[]): void {
  const status = entry.statusFilter.value;
  const appendNew = entry.ticketsCursor === null ? (ticket: Ticket) => status === '' || ticket.status === status : null;
  const { tickets, updated, added } = mergeTickets(entry.tickets, changed, appendNew);
  entry.tickets = tickets;
  for (const ticket of changed) entry.known.set(ticket.id, newerTicket(entry.known.get(ticket.id), ticket));
  for (const ticket of updated) replaceTicketRow(entry, ticket);
  entry.ticketsBody.append(...added.map((ticket) => ticketRow(entry, ticket)));
  if (added.length > 0) syncTicketsNote(entry);
  const history = entry.history;
  const fresh = history && changed.find((ticket) => ticket.id === history.ticket.id && ticket.updated_at >= history.ticket.updated_at);
  if (history && fresh) {
    history.ticket = fresh;
    renderHistorySummary(history);
  }
}

/** Reads the tickets changed since the latest one seen (GET /events/{id}/tickets?updated_since=). */
async function refreshChangedTickets(entry: OpenEvent): Promise<void> {
  const mark = entry.changes;
  if (mark === null) return;
  const at = generation;
  const { changed, mark: next } = await readChanges(mark, (since, cursor) =>
    gateway((platform) =>
      platform.events.GET('/events/{id}/tickets', { params: { ...ofEvent(entry.event.id), query: { updated_since: since, ...pageAt(cursor) } } }),
    ),
  );
  if (!current(entry, at)) return;
  // Only this read moves the mark: a ticket from an undo's answer may be newer than changes not read yet.
  entry.changes = next;
  applyTickets(entry, changed);
}

function checkInRow(checkIn: CheckIn): HTMLTableRowElement {
  return h(
    'tr',
    { 'data-action': checkIn.action },
    cell('At', time(checkIn.at)),
    cell('Action', badge(describeAction(checkIn.action), checkIn.action)),
    cell('Gate', checkIn.action === 'unvalidated' ? '—' : gateLabel(checkIn.gate)),
    cell('Validator', checkIn.validator_id ? h('code', { title: checkIn.validator_id }, shortId(checkIn.validator_id)) : '—'),
    cell('Scan id', checkIn.scan_id ? h('code', {}, checkIn.scan_id) : '—'),
    cell('Reason', checkIn.reason ?? '—'),
  );
}

function renderHistorySummary(history: OpenHistory): void {
  const { ticket } = history;
  history.summary.replaceChildren(
    'Now ',
    badge(ticket.status),
    ticket.status === 'validated' ? h('span', {}, ' at ', time(ticket.validated_at), ', gate ', ticketGate(ticket)) : '',
    ticket.holder_name ? ` · holder ${ticket.holder_name}` : '',
  );
  // A reason being typed keeps the form, even if the ticket changed meanwhile: the API says why an undo is refused.
  history.form.hidden = !offerUndo(ticket, history.reason.value);
}

function createHistory(entry: OpenEvent, ticket: Ticket): OpenHistory {
  const titleId = `ticket-${ticket.id}-checkins-title`;
  const reasonId = `ticket-${ticket.id}-undo-reason`;
  const hintId = `${reasonId}-hint`;
  const reason = h('input', {
    id: reasonId,
    type: 'text',
    required: true,
    maxlength: REASON_MAX,
    autocomplete: 'off',
    'aria-describedby': hintId,
  });
  const form = h(
    'form',
    { class: 'undo-form stack', 'aria-label': `Undo the validation of ticket ${shortId(ticket.id)}` },
    h(
      'div',
      { class: 'field' },
      h('label', { for: reasonId }, 'Reason for the undo'),
      reason,
      h('p', { id: hintId, class: 'hint' }, `Required, 1-${REASON_MAX} characters; kept in the history. The ticket can then be validated again.`),
    ),
    h('button', { type: 'submit', class: 'danger' }, 'Undo validation'),
  );
  const body = h('tbody');
  const note = h('p', { class: 'hint' }, 'Loading check-ins…');
  const summary = h('p', { class: 'ticket-summary' });
  const region = h(
    'section',
    { class: 'checkins', 'aria-labelledby': titleId, 'data-ticket-id': ticket.id },
    h('h4', { id: titleId, tabindex: -1 }, `Check-ins of ticket ${shortId(ticket.id)}`),
    summary,
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'responsive', 'aria-labelledby': titleId },
        h('thead', {}, h('tr', {}, ...['At', 'Action', 'Gate', 'Validator', 'Scan id', 'Reason'].map((name) => h('th', { scope: 'col' }, name)))),
        body,
      ),
    ),
    note,
    form,
  );
  const history: OpenHistory = { ticket, region, summary, body, note, shown: '', form, reason, reads: newestAnswers() };
  form.addEventListener('submit', (e) => void undoValidation(entry, history, e));
  renderHistorySummary(history);
  return history;
}

/** Reads the whole history (oldest first) and shows it when it changed. */
async function loadHistory(entry: OpenEvent, history: OpenHistory): Promise<void> {
  const at = generation;
  const read = history.reads.begin();
  const { items, complete } = await allPages((cursor) =>
    gateway((platform) => platform.events.GET('/tickets/{id}/checkins', { params: { ...ofTicket(history.ticket.id), query: pageAt(cursor) } })),
  );
  if (!current(entry, at) || entry.history !== history || !history.reads.accept(read)) return;
  const key = JSON.stringify(items);
  if (key === history.shown) return;
  history.shown = key;
  history.body.replaceChildren(...items.map(checkInRow));
  history.note.textContent = items.length === 0 ? 'No check-in yet.' : complete ? 'Oldest first.' : `The first ${items.length} check-ins, oldest first.`;
}

async function toggleHistory(entry: OpenEvent, ticketId: string): Promise<void> {
  const previous = entry.history;
  const closing = previous?.ticket.id === ticketId;
  previous?.region.remove();
  entry.history = undefined;
  if (previous) replaceTicketRow(entry, entry.tickets.find((t) => t.id === previous.ticket.id) ?? previous.ticket);
  const ticket = entry.tickets.find((t) => t.id === ticketId);
  const button = () => [...entry.ticketsBody.rows].find((row) => row.dataset.ticketId === ticketId)?.querySelector('button');
  if (closing || !ticket) return button()?.focus();
  const history = createHistory(entry, ticket);
  entry.history = history;
  entry.region.append(history.region);
  replaceTicketRow(entry, ticket);
  history.region.querySelector('h4')?.focus();
  clearError();
  try {
    await loadHistory(entry, history);
  } catch (err) {
    showError(err, 'Could not read the check-ins');
  }
}

async function undoValidation(entry: OpenEvent, history: OpenHistory, event: SubmitEvent): Promise<void> {
  event.preventDefault();
  clearError();
  const at = generation;
  const typed = reasonFromField(history.reason.value);
  if ('problem' in typed) {
    showError(new Error(typed.problem));
    return history.reason.focus();
  }
  const id = history.ticket.id;
  const submit = history.form.querySelector<HTMLButtonElement>('button[type="submit"]');
  try {
    const ticket = await busy([submit], () =>
      gateway((platform) => platform.events.POST('/tickets/{id}/unvalidate', { params: ofTicket(id), body: { reason: typed.reason } })),
    );
    history.reason.value = '';
    if (!current(entry, at)) return;
    applyTickets(entry, [ticket]);
    history.region.querySelector('h4')?.focus();
    announce(`Validation of ticket ${shortId(id)} undone; it can be validated again.`);
  } catch (err) {
    showError(err, 'Could not undo the validation');
    if (!(err instanceof PlatformApiError && err.status === 409)) return;
    // Not validated (any more): show the ticket as it is now.
    history.reason.value = '';
    const ticket = await gateway((platform) => platform.events.GET('/tickets/{id}', { params: ofTicket(id) })).catch(() => undefined);
    if (ticket && current(entry, at)) applyTickets(entry, [ticket]);
  }
  await Promise.all([refreshFigures(entry), loadHistory(entry, history)]).catch(() => undefined);
}

/** Reads the open event's figures, its changed tickets and the open history once. */
async function refreshOpenEvent(entry: OpenEvent): Promise<void> {
  await Promise.all([
    refreshFigures(entry).catch(() => undefined),
    refreshChangedTickets(entry).catch(() => undefined),
    entry.history ? loadHistory(entry, entry.history).catch(() => undefined) : undefined,
  ]);
}

/** Reads the open event now, then every 2 s while the Events tab is shown and the page visible; a failed read is retried on the next tick. */
function refreshNow(): void {
  const entry = open;
  if (!entry || refreshing || !tabShown) return;
  stopRefresh();
  refreshing = true;
  void refreshOpenEvent(entry).finally(() => {
    refreshing = false;
    scheduleRefresh();
  });
}

function scheduleRefresh(): void {
  if (timer !== undefined || refreshing || !open || !tabShown || document.hidden) return;
  timer = window.setTimeout(() => {
    timer = undefined;
    refreshNow();
  }, REFRESH_MS);
}

async function openEvent(event: PlatformEvent, button: HTMLButtonElement | null): Promise<void> {
  clearError();
  closeEvent();
  const entry = createEventRegion(event);
  open = entry;
  byId('event-detail').replaceChildren(entry.region);
  entry.region.querySelector('h3')?.focus();
  setWorkspaceAddress('events', { kind: 'event', id: event.id });
  try {
    await busy([button], async () => {
      // The figures first: changes after their as_of are read later, and the tickets page, read after it, holds every earlier one.
      const stats = await refreshFigures(entry);
      if (stats) announce(`Event “${event.name}”: ${describeFigures(stats)}.`);
      await loadTicketsPage(entry, null);
    });
  } catch (err) {
    showError(err, 'Could not open the event');
  }
  scheduleRefresh();
}

/** Opens the event an address names (read by id), or closes the open one. */
export async function followEventAddress(eventId: string | undefined): Promise<void> {
  if (eventId === undefined) return closeEvent();
  if (open?.event.id === eventId) return open.region.querySelector<HTMLElement>('h3')?.focus();
  const event = await gateway((platform) => platform.events.GET('/events/{id}', { params: ofEvent(eventId) }));
  await openEvent(event, null);
}

/** The open event, for the tab's address. */
export const shownEvent = (): Detail | undefined => (open ? { kind: 'event', id: open.event.id } : undefined);

function closeEvent(): void {
  stopRefresh();
  open?.chart.destroy();
  open = undefined;
  clear(byId('event-detail'));
}

export function initEventsView(): void {
  byId('events-refresh').addEventListener('click', () => void reloadEvents());
  byId('events-more').addEventListener('click', () => {
    loadEventsPage(eventsCursor).catch((err: unknown) => showError(err, 'Could not list more events'));
  });
  // A hidden browser tab reads nothing; shown again, the figures are read at once.
  document.addEventListener('visibilitychange', () => {
    if (document.hidden) return stopRefresh();
    refreshNow();
  });
}

/** Lists the events the first time the tab is shown; an open event is read at once and then every 2 s. */
export async function showEvents(): Promise<void> {
  tabShown = true;
  refreshNow();
  if (loaded) return;
  loaded = true;
  try {
    await loadEventsPage(null);
  } catch (err) {
    loaded = false;
    showError(err, 'Could not list the events');
  }
}

/** The tab is left: the open event stays on the page but is not read again until the tab is back. */
export function leaveEvents(): void {
  tabShown = false;
  stopRefresh();
}

/** Forgets the previous workspace's events and stops the timer. */
export function resetEventsView(): void {
  generation++;
  loaded = false;
  tabShown = false;
  closeEvent();
  resetEventsList();
}
