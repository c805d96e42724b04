// The warehouse (contract sections 9 and 18): items with their stock per location, each location's
// stock, and an open item's levels and reservations. An open item adjusts its stock, transfers it
// between locations and reserves it; an active reservation is committed or released. Lists come
// first; each form opens from its button. A refused write shows the API's own words.
import { allPages, pageAt, type AdjustmentReason, type Item, type Location, type LocationStockEntry, type Reservation, type StockLevel } from './api.js';
import { badge, busy, byId, cell, clear, formToggleById, h, shortId, time } from './dom.js';
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
} from './warehouse.format.js';
import { setWorkspaceAddress } from './address.js';
import { announce, clearError, showError } from './messages.js';
import type { Detail } from './route.format.js';
import { gateway } from './session.js';

/** Items per page: each shown item's levels are read too (GET /items/{id}/stock). */
const ITEMS_PAGE = 20;
const REASONS: AdjustmentReason[] = ['receipt', 'sale', 'return', 'damage', 'correction'];

type Action = 'adjust' | 'transfer' | 'reserve';
const ACTION_LABELS: Record<Action, string> = { adjust: 'Adjust stock', transfer: 'Transfer', reserve: 'Reserve' };

interface OpenItem {
  item: Item;
  region: HTMLElement;
  facts: HTMLElement;
  levelsBody: HTMLTableSectionElement;
  levelsNote: HTMLElement;
  buttons: Record<Action, HTMLButtonElement>;
  formSlot: HTMLElement;
  action: Action | null;
  reservationsBody: HTMLTableSectionElement;
  reservationsNote: HTMLElement;
  /** The reservation the address names: its row is marked whenever the rows are drawn, also by a read still in flight when the address changed. */
  markedReservationId: string | null;
}

interface OpenLocation {
  location: Location;
  region: HTMLElement;
  body: HTMLTableSectionElement;
  note: HTMLElement;
  more: HTMLButtonElement;
  cursor: string | null;
  count: number;
}

const locations = new Map<string, Location>();
let loaded = false;
let itemsCursor: string | null = null;
let itemCount = 0;
let openItem: OpenItem | undefined;
let openLocation: OpenLocation | undefined;
/** Bumped when the workspace changes or a list is read again, so older answers are dropped. */
let generation = 0;

const ofId = (id: string) => ({ path: { id } });
const itemsBody = () => byId<HTMLTableElement>('items-table').tBodies[0]!;
const locationsBody = () => byId<HTMLTableElement>('locations-table').tBodies[0]!;
const label = (id: string | null) => locationLabel(id, locations);

function locationSelect(id: string, selected: string | null): HTMLSelectElement {
  const select = h('select', { id, name: id }, ...locationOptions(locations).map((o) => h('option', { value: o.value }, o.label)));
  select.value = locationValue(selected);
  return select;
}

function field(id: string, text: string, control: HTMLElement): HTMLElement {
  return h('div', { class: 'field' }, h('label', { for: id }, text), control);
}

const numberInput = (id: string, props: Record<string, string | number | boolean> = {}) =>
  h('input', { id, name: id, type: 'number', step: 1, inputmode: 'numeric', autocomplete: 'off', ...props });
const textInput = (id: string, maxlength: number) => h('input', { id, name: id, type: 'text', maxlength, autocomplete: 'off' });

// ---- Items ----

function itemRow(item: Item, levels: readonly StockLevel[] | null): HTMLTableRowElement {
  return h(
    'tr',
    { 'data-item-id': item.id },
    cell('SKU', h('strong', {}, item.sku)),
    cell('Name', item.name),
    cell('Default location', label(item.location_id)),
    cell('Quantity', String(item.quantity)),
    cell('Levels', levels === null ? '…' : levelsLine(levels, locations)),
    cell(
      '',
      h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          'aria-label': `Open item ${item.sku}`,
          onclick: (e: Event) => void openItemView(item, e.currentTarget as HTMLButtonElement),
        },
        'Open',
      ),
    ),
  );
}

function replaceItemRow(item: Item, levels: readonly StockLevel[]): void {
  const old = [...itemsBody().rows].find((row) => row.dataset.itemId === item.id);
  if (!old) return;
  const focused = old.contains(document.activeElement);
  const row = itemRow(item, levels);
  old.replaceWith(row);
  if (focused) row.querySelector('button')?.focus();
}

const readStock = (id: string) => gateway((platform) => platform.warehouse.GET('/items/{id}/stock', { params: ofId(id) }));

/** One page of items (oldest first), each with its levels. */
async function loadItemsPage(cursor: string | null): Promise<void> {
  const at = generation;
  const page = await gateway((platform) => platform.warehouse.GET('/items', { params: { query: { limit: ITEMS_PAGE, cursor: cursor ?? undefined } } }));
  if (at !== generation) return;
  itemsBody().append(...page.data.map((item) => itemRow(item, null)));
  itemCount += page.data.length;
  itemsCursor = page.next_cursor;
  byId('items-empty').hidden = itemCount > 0;
  byId('items-more').hidden = itemsCursor === null;
  const stocks = await Promise.all(page.data.map((item) => readStock(item.id).catch(() => null)));
  if (at !== generation) return;
  page.data.forEach((item, i) => {
    const stock = stocks[i];
    if (stock) replaceItemRow(item, stock.levels);
  });
}

// ---- Locations ----

function locationRow(location: Location): HTMLTableRowElement {
  return h(
    'tr',
    { 'data-location-id': location.id },
    cell('Code', h('code', {}, location.code)),
    cell('Name', location.name),
    cell('Created', time(location.created_at)),
    cell(
      '',
      h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          'aria-label': `Show the stock at ${location.code}`,
          onclick: (e: Event) => void openLocationView(location, e.currentTarget as HTMLButtonElement),
        },
        'Stock',
      ),
    ),
  );
}

/** Every location (they are few, and every select and label needs them). */
async function loadLocations(): Promise<void> {
  const at = generation;
  const { items } = await allPages((cursor) => gateway((platform) => platform.warehouse.GET('/locations', { params: { query: pageAt(cursor) } })));
  if (at !== generation) return;
  locations.clear();
  for (const location of items) locations.set(location.id, location);
  locationsBody().replaceChildren(...items.map(locationRow));
  byId('locations-empty').hidden = items.length > 0;
  fillItemFormLocations();
}

function fillItemFormLocations(): void {
  const select = byId<HTMLSelectElement>('item-location');
  const chosen = select.value;
  select.replaceChildren(...locationOptions(locations).map((o) => h('option', { value: o.value }, o.value === '' ? 'None' : o.label)));
  select.value = locations.has(chosen) ? chosen : '';
}

function stockEntryRow(entry: LocationStockEntry): HTMLTableRowElement {
  return h(
    'tr',
    { 'data-item-id': entry.item_id },
    cell('SKU', h('strong', {}, entry.sku)),
    cell('On hand', String(entry.on_hand)),
    cell('Reserved', String(entry.reserved)),
    cell('Available', String(entry.available)),
  );
}

async function loadLocationStock(entry: OpenLocation, cursor: string | null): Promise<void> {
  const at = generation;
  const page = await gateway((platform) => platform.warehouse.GET('/locations/{id}/stock', { params: { ...ofId(entry.location.id), query: pageAt(cursor) } }));
  if (at !== generation || openLocation !== entry) return;
  if (cursor === null) {
    clear(entry.body);
    entry.count = 0;
  }
  entry.body.append(...page.data.map(stockEntryRow));
  entry.count += page.data.length;
  entry.cursor = page.next_cursor;
  entry.more.hidden = entry.cursor === null;
  entry.note.textContent = entry.count === 0 ? 'No stock here.' : `${entry.count} item${entry.count === 1 ? '' : 's'} with stock here, by SKU.`;
}

async function openLocationView(location: Location, button: HTMLButtonElement | null): Promise<void> {
  clearError();
  const titleId = `location-${location.id}-stock-title`;
  const body = h('tbody');
  const note = h('p', { class: 'hint' }, 'Loading stock…');
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Load more stock');
  const close = h('button', { type: 'button', class: 'secondary' }, 'Close location');
  const region = h(
    'section',
    { class: 'card location', 'aria-labelledby': titleId, 'data-location-id': location.id },
    h('header', { class: 'list-head' }, h('h4', { id: titleId, tabindex: -1 }, `Stock at ${location.code}`), close),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'responsive', 'aria-labelledby': titleId },
        h('thead', {}, h('tr', {}, ...['SKU', 'On hand', 'Reserved', 'Available'].map((name) => h('th', { scope: 'col' }, name)))),
        body,
      ),
    ),
    note,
    more,
  );
  const entry: OpenLocation = { location, region, body, note, more, cursor: null, count: 0 };
  openLocation = entry;
  setWorkspaceAddress('warehouse', { kind: 'location', id: location.id });
  byId('location-detail').replaceChildren(region);
  region.querySelector('h4')?.focus();
  close.addEventListener('click', () => {
    openLocation = undefined;
    region.remove();
    setWorkspaceAddress('warehouse', shownWarehouse());
    button?.focus();
  });
  more.addEventListener('click', () => {
    loadLocationStock(entry, entry.cursor).catch((err: unknown) => showError(err, 'Could not list more stock'));
  });
  try {
    await busy([button], () => loadLocationStock(entry, null));
  } catch (err) {
    showError(err, `Could not read the stock at ${location.code}`);
  }
}

// ---- An open item ----

function levelRow(level: StockLevel): HTMLTableRowElement {
  return h(
    'tr',
    { 'data-location-id': locationValue(level.location_id) },
    cell('Location', label(level.location_id)),
    cell('On hand', String(level.on_hand)),
    cell('Reserved', String(level.reserved)),
    cell('Available', String(level.available)),
  );
}

function reservationRow(entry: OpenItem, reservation: Reservation): HTMLTableRowElement {
  const name = `reservation ${shortId(reservation.id)}`;
  const actions = settleable(reservation)
    ? h(
        'span',
        { class: 'actions' },
        h(
          'button',
          {
            type: 'button',
            'aria-label': `Commit ${name}`,
            onclick: (e: Event) => void settle(entry, reservation, 'commit', e.currentTarget as HTMLButtonElement),
          },
          'Commit',
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            'aria-label': `Release ${name}`,
            onclick: (e: Event) => void settle(entry, reservation, 'release', e.currentTarget as HTMLButtonElement),
          },
          'Release',
        ),
      )
    : '—';
  return h(
    'tr',
    { 'data-reservation-id': reservation.id, 'data-status': reservation.status },
    cell('Reservation', h('code', { title: reservation.id }, shortId(reservation.id))),
    cell('Location', label(reservation.location_id)),
    cell('Quantity', String(reservation.quantity)),
    cell('Status', badge(reservation.status)),
    cell('Reference', reservation.reference ?? '—'),
    cell('Expires', time(reservation.expires_at)),
    h('td', { 'data-label': '' }, actions),
  );
}

function renderFacts(entry: OpenItem): void {
  const fact = (term: string, value: Node | string) => [h('dt', {}, term), h('dd', { 'data-fact': term }, value)];
  entry.facts.replaceChildren(
    ...fact('Id', h('code', {}, entry.item.id)),
    ...fact('Default location', label(entry.item.location_id)),
    ...fact('Quantity', String(entry.item.quantity)),
  );
}

/** Reads the item, its levels and its reservations again, and shows them here and in the list. */
async function refreshItem(entry: OpenItem): Promise<void> {
  const at = generation;
  const id = entry.item.id;
  const [item, stock, reservations] = await Promise.all([
    gateway((platform) => platform.warehouse.GET('/items/{id}', { params: ofId(id) })),
    readStock(id),
    allPages((cursor) => gateway((platform) => platform.warehouse.GET('/items/{id}/reservations', { params: { ...ofId(id), query: pageAt(cursor) } }))),
  ]);
  if (at !== generation || openItem !== entry) return;
  entry.item = item;
  renderFacts(entry);
  entry.levelsBody.replaceChildren(...stock.levels.map(levelRow));
  entry.levelsNote.textContent = stock.levels.length === 0 ? 'No stock at any location.' : `${stock.quantity} in all.`;
  entry.reservationsBody.replaceChildren(...reservations.items.map((r) => reservationRow(entry, r)));
  markReservation(entry);
  entry.reservationsNote.textContent =
    reservations.items.length === 0
      ? 'No reservation yet.'
      : reservations.complete
        ? 'Oldest first.'
        : `The first ${reservations.items.length} reservations, oldest first.`;
  replaceItemRow(item, stock.levels);
  if (openLocation) await loadLocationStock(openLocation, null).catch(() => undefined);
}

/** The form of one action, its fields named after the item so two open items could never share an id. */
function actionForm(entry: OpenItem, action: Action): { form: HTMLFormElement; send: () => Promise<string> } {
  const { item } = entry;
  const id = (name: string) => `item-${item.id}-${action}-${name}`;
  const itemPath = { params: ofId(item.id) };
  let fields: HTMLElement[];
  let send: () => Promise<string>;
  if (action === 'adjust') {
    const location = locationSelect(id('location'), item.location_id);
    const delta = numberInput(id('delta'), { required: true });
    const reason = h('select', { id: id('reason') }, ...REASONS.map((r) => h('option', { value: r }, r)));
    const note = textInput(id('note'), 500);
    fields = [
      field(id('location'), 'Location', location),
      field(id('delta'), 'Change (+ in, − out)', delta),
      field(id('reason'), 'Reason', reason),
      field(id('note'), 'Note (optional)', note),
    ];
    send = async () => {
      const { adjustment } = await gateway((platform) =>
        platform.warehouse.POST('/items/{id}/stock-adjustments', {
          ...itemPath,
          body: {
            location_id: locationFromValue(location.value),
            delta: Number(delta.value),
            reason: reason.value as AdjustmentReason,
            note: textField(note.value),
          },
        }),
      );
      return `Stock at ${label(adjustment.location_id)} changed by ${adjustment.delta}; ${item.sku} now ${adjustment.quantity_after} in all.`;
    };
  } else if (action === 'transfer') {
    const from = locationSelect(id('from'), item.location_id);
    const to = locationSelect(id('to'), [...locations.keys()].find((l) => l !== item.location_id) ?? null);
    const quantity = numberInput(id('quantity'), { required: true, min: 1 });
    const note = textInput(id('note'), 500);
    fields = [
      field(id('from'), 'From', from),
      field(id('to'), 'To', to),
      field(id('quantity'), 'Quantity', quantity),
      field(id('note'), 'Note (optional)', note),
    ];
    send = async () => {
      const { transfer } = await gateway((platform) =>
        platform.warehouse.POST('/items/{id}/transfers', {
          ...itemPath,
          body: {
            from_location_id: locationFromValue(from.value),
            to_location_id: locationFromValue(to.value),
            quantity: Number(quantity.value),
            note: textField(note.value),
          },
        }),
      );
      return `${transfer.quantity} of ${item.sku} moved from ${label(transfer.from_location_id)} to ${label(transfer.to_location_id)}.`;
    };
  } else {
    const location = locationSelect(id('location'), item.location_id);
    const quantity = numberInput(id('quantity'), { required: true, min: 1 });
    const expires = numberInput(id('expires'), { min: 60, placeholder: '900' });
    const reference = textInput(id('reference'), 200);
    fields = [
      field(id('location'), 'Location', location),
      field(id('quantity'), 'Quantity', quantity),
      field(id('expires'), 'Expires in (seconds, optional)', expires),
      field(id('reference'), 'Reference (optional)', reference),
    ];
    send = async () => {
      const reservation = await gateway((platform) =>
        platform.warehouse.POST('/items/{id}/reservations', {
          ...itemPath,
          body: {
            location_id: locationFromValue(location.value),
            quantity: Number(quantity.value),
            expires_in_seconds: numberField(expires.value),
            reference: textField(reference.value),
          },
        }),
      );
      return describeReservation(reservation, label(reservation.location_id));
    };
  }
  const cancel = h('button', { type: 'button', class: 'secondary' }, 'Cancel');
  cancel.addEventListener('click', () => closeAction(entry, true));
  const form = h(
    'form',
    { class: 'card stack action-form', id: id('form'), 'aria-label': `${ACTION_LABELS[action]} ${item.sku}` },
    h('div', { class: 'field-row' }, ...fields),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, ACTION_LABELS[action]), cancel),
  );
  return { form, send };
}

function closeAction(entry: OpenItem, focusButton: boolean): void {
  const was = entry.action;
  entry.action = null;
  clear(entry.formSlot);
  for (const button of Object.values(entry.buttons)) button.setAttribute('aria-expanded', 'false');
  if (was && focusButton) entry.buttons[was].focus();
}

function toggleAction(entry: OpenItem, action: Action): void {
  const reopen = entry.action !== action;
  closeAction(entry, false);
  if (!reopen) return entry.buttons[action].focus();
  entry.action = action;
  entry.buttons[action].setAttribute('aria-expanded', 'true');
  const { form, send } = actionForm(entry, action);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    clearError();
    const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]');
    busy([submit], send).then(
      async (done) => {
        closeAction(entry, true);
        announce(done);
        await refreshItem(entry).catch((err: unknown) => showError(err, 'Could not read the item again'));
      },
      (err: unknown) => showError(err, `Could not ${ACTION_LABELS[action].toLowerCase()}`),
    );
  });
  entry.formSlot.replaceChildren(form);
  form.querySelector<HTMLElement>('select, input')?.focus();
}

async function settle(entry: OpenItem, reservation: Reservation, how: 'commit' | 'release', button: HTMLButtonElement): Promise<void> {
  clearError();
  const params = ofId(reservation.id);
  try {
    const settled = await busy([button], () =>
      how === 'commit'
        ? gateway((platform) => platform.warehouse.POST('/reservations/{id}/commit', { params })).then((r) => r.reservation)
        : gateway((platform) => platform.warehouse.POST('/reservations/{id}/release', { params })),
    );
    announce(describeReservation(settled, label(settled.location_id)));
  } catch (err) {
    showError(err, `Could not ${how} the reservation`);
  }
  // Either way the list shows the reservation as it is now (a refused one: committed, released or expired meanwhile).
  await refreshItem(entry).catch(() => undefined);
}

function createItemRegion(item: Item): OpenItem {
  const titleId = `item-${item.id}-title`;
  const levelsTitleId = `item-${item.id}-levels-title`;
  const reservationsTitleId = `item-${item.id}-reservations-title`;
  const table = (titleId: string, columns: string[], body: HTMLTableSectionElement) =>
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
            ...columns.map((name) => (name ? h('th', { scope: 'col' }, name) : h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')))),
          ),
        ),
        body,
      ),
    );
  const levelsBody = h('tbody');
  const reservationsBody = h('tbody');
  const formSlot = h('div');
  const close = h('button', { type: 'button', class: 'secondary' }, 'Close item');
  const buttons = Object.fromEntries(
    (Object.keys(ACTION_LABELS) as Action[]).map((action) => [action, h('button', { type: 'button', 'aria-expanded': 'false' }, ACTION_LABELS[action])]),
  ) as Record<Action, HTMLButtonElement>;
  const entry: OpenItem = {
    item,
    region: h('section'),
    facts: h('dl', { class: 'facts' }),
    levelsBody,
    levelsNote: h('p', { class: 'hint' }, 'Loading stock…'),
    buttons,
    formSlot,
    action: null,
    reservationsBody,
    reservationsNote: h('p', { class: 'hint' }, 'Loading reservations…'),
    markedReservationId: null,
  };
  entry.region = h(
    'section',
    { class: 'card item', 'aria-labelledby': titleId, 'data-item-id': item.id },
    h('header', { class: 'list-head' }, h('h3', { id: titleId, tabindex: -1 }, `${item.sku} — ${item.name}`), close),
    entry.facts,
    h('h4', { id: levelsTitleId }, 'Stock per location'),
    table(levelsTitleId, ['Location', 'On hand', 'Reserved', 'Available'], levelsBody),
    entry.levelsNote,
    h('div', { class: 'actions' }, ...Object.values(buttons)),
    formSlot,
    h('h4', { id: reservationsTitleId }, 'Reservations'),
    table(reservationsTitleId, ['Reservation', 'Location', 'Quantity', 'Status', 'Reference', 'Expires', ''], reservationsBody),
    entry.reservationsNote,
  );
  renderFacts(entry);
  for (const [action, button] of Object.entries(buttons) as [Action, HTMLButtonElement][]) button.addEventListener('click', () => toggleAction(entry, action));
  close.addEventListener('click', () => {
    const open = [...itemsBody().rows].find((row) => row.dataset.itemId === item.id)?.querySelector('button');
    closeItem();
    setWorkspaceAddress('warehouse', shownWarehouse());
    open?.focus();
  });
  return entry;
}

/** Opens an item below the list; `address`: its address is set (not when a reservation's address opens it). */
async function openItemView(item: Item, button: HTMLButtonElement | null, address = true): Promise<void> {
  clearError();
  closeItem();
  const entry = createItemRegion(item);
  openItem = entry;
  byId('item-detail').replaceChildren(entry.region);
  entry.region.querySelector('h3')?.focus();
  if (address) setWorkspaceAddress('warehouse', { kind: 'item', id: item.id });
  try {
    await busy([button], () => refreshItem(entry));
  } catch (err) {
    showError(err, `Could not open item ${item.sku}`);
  }
}

/** Opens what an address names: an item, a location's stock, or a reservation (in its item, its row marked). */
export async function followWarehouseAddress(detail: Detail | undefined): Promise<void> {
  if (detail === undefined) {
    closeItem();
    openLocation = undefined;
    return clear(byId('location-detail'));
  }
  if (detail.kind === 'location') {
    if (openLocation?.location.id === detail.id) return;
    await loadLocations();
    const location = locations.get(detail.id);
    if (!location) throw new Error('No such location in this workspace.');
    return openLocationView(location, null);
  }
  let itemId = detail.id;
  if (detail.kind === 'reservation') {
    itemId = (await gateway((platform) => platform.warehouse.GET('/reservations/{id}', { params: ofId(detail.id) }))).item_id;
  } else if (detail.kind !== 'item') return;
  if (openItem?.item.id !== itemId) {
    // The locations first: the item's levels and forms name them.
    if (locations.size === 0) await loadLocations();
    const item = await gateway((platform) => platform.warehouse.GET('/items/{id}', { params: ofId(itemId) }));
    await openItemView(item, null, detail.kind === 'item');
  }
  if (!openItem) return;
  openItem.markedReservationId = detail.kind === 'reservation' ? detail.id : null;
  markReservation(openItem);
}

/** Marks the row of the reservation the address names (aria-current), and no other. */
function markReservation(entry: OpenItem): void {
  for (const row of entry.reservationsBody.rows) {
    if (row.dataset.reservationId === entry.markedReservationId) row.setAttribute('aria-current', 'true');
    else row.removeAttribute('aria-current');
  }
}

/** The open item, or else the open location, for the tab's address. */
export function shownWarehouse(): Detail | undefined {
  if (openItem) return { kind: 'item', id: openItem.item.id };
  return openLocation ? { kind: 'location', id: openLocation.location.id } : undefined;
}

function closeItem(): void {
  openItem = undefined;
  clear(byId('item-detail'));
}

// ---- The tab ----

async function reloadAll(): Promise<void> {
  generation++;
  itemCount = 0;
  itemsCursor = null;
  clear(itemsBody());
  await loadLocations();
  await loadItemsPage(null);
}

export function initWarehouseView(): void {
  const itemForm = formToggleById('item-new', 'item-form', 'item-form-cancel');
  const locationForm = formToggleById('location-new', 'location-form', 'location-form-cancel');
  byId<HTMLFormElement>('item-form').addEventListener('submit', (event) => {
    event.preventDefault();
    clearError();
    const submit = byId<HTMLFormElement>('item-form').querySelector<HTMLButtonElement>('button[type="submit"]');
    const body = {
      sku: byId<HTMLInputElement>('item-sku').value,
      name: byId<HTMLInputElement>('item-name').value,
      location_id: locationFromValue(byId<HTMLSelectElement>('item-location').value),
    };
    busy([submit], async () => {
      const item = await gateway((platform) => platform.warehouse.POST('/items', { body }));
      itemForm.close();
      announce(`Item ${item.sku} created with quantity 0: stock comes in through an adjustment.`);
      await reloadAll();
      await openItemView(item, null);
    }).catch((err: unknown) => showError(err, 'Could not create the item'));
  });
  byId<HTMLFormElement>('location-form').addEventListener('submit', (event) => {
    event.preventDefault();
    clearError();
    const submit = byId<HTMLFormElement>('location-form').querySelector<HTMLButtonElement>('button[type="submit"]');
    const body = { name: byId<HTMLInputElement>('location-name').value, code: byId<HTMLInputElement>('location-code').value };
    busy([submit], async () => {
      const location = await gateway((platform) => platform.warehouse.POST('/locations', { body }));
      locationForm.close();
      announce(`Location ${location.code} created.`);
      await loadLocations();
    }).catch((err: unknown) => showError(err, 'Could not create the location'));
  });
  const refresh = byId<HTMLButtonElement>('items-refresh');
  refresh.addEventListener('click', () => {
    clearError();
    busy([refresh], async () => {
      await reloadAll();
      if (openItem) await refreshItem(openItem);
    }).then(
      () => announce(`${itemCount} item${itemCount === 1 ? '' : 's'} shown${itemsCursor ? '; more can be loaded' : ''}.`),
      (err: unknown) => showError(err, 'Could not list the items'),
    );
  });
  byId('items-more').addEventListener('click', () => {
    loadItemsPage(itemsCursor).catch((err: unknown) => showError(err, 'Could not list more items'));
  });
}

/** Lists the locations and the items the first time the tab is shown for this workspace. */
export async function showWarehouse(): Promise<void> {
  if (loaded) return;
  loaded = true;
  try {
    await reloadAll();
  } catch (err) {
    loaded = false;
    showError(err, 'Could not list the warehouse');
  }
}

/** Forgets the previous workspace's warehouse. */
export function resetWarehouseView(): void {
  generation++;
  loaded = false;
  locations.clear();
  itemCount = 0;
  itemsCursor = null;
  openLocation = undefined;
  closeItem();
  clear(itemsBody());
  clear(locationsBody());
  clear(byId('location-detail'));
  byId('items-empty').hidden = true;
  byId('items-more').hidden = true;
  byId('locations-empty').hidden = true;
}
