// What the events page says about an event's figures, its tickets and their check-ins: plain
// functions of the API's answers (contract sections 8 and 15), without the DOM, so they are tested alone.
import { allPages, type CheckInAction, type EventStats, type Page, type Ticket } from './api.js';

/** How validations without a gate are shown (the API's `gate: null`). */
export const NO_GATE = '(no gate)';

/** The API's limit on an undo's reason (contract section 15), in Unicode code points. */
export const REASON_MAX = 500;

export function gateLabel(gate: string | null): string {
  return gate ?? NO_GATE;
}

/** One row per gate: named gates in alphabetical order, validations without a gate last. */
export function gateRows(stats: EventStats): { gate: string; validated: number }[] {
  return [...stats.gates]
    .sort((a, b) => (a.gate === null ? 1 : b.gate === null ? -1 : a.gate < b.gate ? -1 : a.gate > b.gate ? 1 : 0))
    .map(({ gate, validated }) => ({ gate: gateLabel(gate), validated }));
}

const plural = (count: number, one: string, many = `${one}s`): string => `${count} ${count === 1 ? one : many}`;

/** `2 of 3 tickets validated, 1 issued, 1 rejected duplicate`: the figures in one sentence. */
export function describeFigures(stats: EventStats): string {
  const { total, issued, validated } = stats.tickets;
  return `${validated} of ${plural(total, 'ticket')} validated, ${issued} issued, ${plural(stats.rejected_duplicates, 'rejected duplicate')}`;
}

/** `rejected duplicate` for `rejected_duplicate`: an action in words. */
export function describeAction(action: CheckInAction): string {
  return action.replaceAll('_', ' ');
}

/** The gate a ticket was validated at: a dash while it is not validated. */
export function ticketGate(ticket: Ticket): string {
  return ticket.status === 'validated' ? gateLabel(ticket.gate) : '—';
}

/**
 * The reason of an undo as typed: surrounding spaces go, and what is left must be 1-500
 * characters (the API's rule, checked here so a blank reason never leaves the page).
 */
export function reasonFromField(text: string): { reason: string } | { problem: string } {
  const reason = text.trim();
  if (reason === '') return { problem: 'Give the reason for the undo: it is kept in the ticket’s history.' };
  const length = [...reason].length;
  if (length > REASON_MAX) return { problem: `The reason is ${length} characters long; at most ${REASON_MAX} are kept.` };
  return { reason };
}

/**
 * Whether the undo form is offered: while the ticket is validated, and while a reason is being
 * typed even if the ticket changed meanwhile (the API then says why the undo is refused).
 */
export function offerUndo(ticket: Ticket, typedReason: string): boolean {
  return ticket.status === 'validated' || typedReason.trim() !== '';
}

/** The latest `updated_at` among `tickets` and `since` (RFC 3339 UTC timestamps with ms compare as strings). */
export function latestUpdate(tickets: readonly Ticket[], since: string): string {
  return tickets.reduce((latest, ticket) => (ticket.updated_at > latest ? ticket.updated_at : latest), since);
}

/** The newer of two versions of a ticket (`known` may be absent); the read one on a tie. */
export function newerTicket(known: Ticket | undefined, read: Ticket): Ticket {
  return known && known.updated_at > read.updated_at ? known : read;
}

/**
 * How long before the newest `updated_at` seen the changes are asked from. A change commits a few
 * milliseconds after its `updated_at`, so one stamped just before the newest seen can commit after
 * that was read; the API reference suggests 5 s. A ticket read twice is harmless.
 */
export const CHANGES_MARGIN_MS = 5_000;

/** The `updated_since` to ask for the changes after `latest`, with the margin. */
export function updatedSince(latest: string): string {
  return new Date(Date.parse(latest) - CHANGES_MARGIN_MS).toISOString();
}

/** Where the reads of changed tickets stand: the newest `updated_at` seen, and where a read cut short stopped. */
export interface ChangesMark {
  latest: string;
  stopped: { since: string; cursor: string } | null;
}

/**
 * Reads the tickets changed since `mark` (at most `maxPages` pages) and gives the next mark. After a
 * read cut short the next one goes on from where it stopped: more changes inside the margin than
 * one read holds would otherwise be read again and again, and the newer ones never.
 */
export async function readChanges(
  mark: ChangesMark,
  fetchPage: (since: string, cursor: string | null) => Promise<Page<Ticket>>,
  maxPages = 5,
): Promise<{ changed: Ticket[]; mark: ChangesMark }> {
  const { since, cursor } = mark.stopped ?? { since: updatedSince(mark.latest), cursor: null };
  const { items, next } = await allPages((at) => fetchPage(since, at), maxPages, cursor);
  return { changed: items, mark: { latest: latestUpdate(items, mark.latest), stopped: next === null ? null : { since, cursor: next } } };
}

/**
 * The shown tickets with the changed ones put in their place (an answer older than the row is
 * dropped). A changed ticket not shown is appended, oldest first, only when `appendNew` accepts it
 * (the whole list is shown and it matches the filter); else it belongs to a page not read yet.
 */
export function mergeTickets(
  shown: readonly Ticket[],
  changed: readonly Ticket[],
  appendNew: ((ticket: Ticket) => boolean) | null = null,
): { tickets: Ticket[]; updated: Ticket[]; added: Ticket[] } {
  const byId = new Map(changed.map((ticket) => [ticket.id, ticket]));
  const updated: Ticket[] = [];
  const tickets = shown.map((ticket) => {
    const next = byId.get(ticket.id);
    byId.delete(ticket.id);
    if (!next || next.updated_at < ticket.updated_at || JSON.stringify(next) === JSON.stringify(ticket)) return ticket;
    updated.push(next);
    return next;
  });
  const added = appendNew
    ? [...byId.values()].filter(appendNew).sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1))
    : [];
  return { tickets: [...tickets, ...added], updated, added };
}

/**
 * Answers of repeated reads of one thing (a timer's and a click's) can arrive out of order:
 * `begin()` numbers a read, `accept(n)` is false for an answer older than one already shown.
 */
export function newestAnswers(): { begin(): number; accept(read: number): boolean } {
  let started = 0;
  let shown = 0;
  return {
    begin: () => ++started,
    accept: (read) => {
      if (read < shown) return false;
      shown = read;
      return true;
    },
  };
}
