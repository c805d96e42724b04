// Webhook endpoints of each service (contract section 11): list, create (secret shown once),
// enable or disable, delete, the latest deliveries with their status, each one sent again on
// request (Resend), and the attempts per hour or day by outcome as a chart.
import {
  allPages,
  pageAt,
  PlatformApiError,
  type Delivery,
  type PlatformClient,
  type ServiceMeta,
  type WebhookEndpoint,
  type WebhookEventType,
} from './api.js';
import { copyText } from './clipboard.js';
import { confirmAction } from './confirm.js';
import { badge, busy, byId, cell, clear, formToggle, h, shortId, time } from './dom.js';
import { announce, clearError, showError } from './messages.js';
import { setWorkspaceAddress } from './address.js';
import { routeHash, workspaceRoute, type Detail } from './route.format.js';
import { seriesChartView, type SeriesChartView } from './series.chart.js';
import { deliverySeriesChart } from './series.format.js';
import { currentWorkspace, gateway, getMeta } from './session.js';

/** How often shown deliveries are read again. */
const DELIVERIES_POLL_MS = 2000;
const DELIVERIES_SHOWN = 20;

interface ServiceSection {
  service: ServiceMeta;
  list: HTMLElement;
  empty: HTMLElement;
}

interface OpenDeliveries {
  section: ServiceSection;
  endpoint: WebhookEndpoint;
  body: HTMLTableSectionElement;
  note: HTMLElement;
  chart: SeriesChartView;
  /** The deliveries shown, so a read that changed nothing leaves the rows (and the focus on a button) alone. */
  shown: string;
  timer?: number;
}

const sections = new Map<string, ServiceSection>();
const openDeliveries = new Map<string, OpenDeliveries>();
let loaded = false;
let restoring = false;
let shownEndpoint: Extract<Detail, { kind: 'endpoint' }> | undefined;
/** Bumped when the workspace changes, so answers for the previous one are dropped. */
let generation = 0;

/**
 * The service's client for its webhook endpoints. The webhook endpoints API is the same in every
 * service (contract section 11), so the events service's types stand for all three.
 */
function webhooksOf(platform: PlatformClient, service: ServiceMeta): PlatformClient['events'] {
  if (!(service.name in platform)) throw new Error(`The console cannot call the ${service.name} service yet.`);
  return platform[service.name as keyof PlatformClient] as unknown as PlatformClient['events'];
}
const ofEndpoint = (endpoint: WebhookEndpoint) => ({ path: { id: endpoint.id } });

function deliveryRow(open: OpenDeliveries, delivery: Delivery): HTMLTableRowElement {
  const resend = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      'aria-label': `Resend event ${delivery.event_id} (attempt ${delivery.attempt}, ${delivery.status})`,
      onclick: (e: Event) => void resendDelivery(open, delivery, e.currentTarget as HTMLButtonElement),
    },
    'Resend',
  );
  return h(
    'tr',
    { 'data-delivery-id': delivery.id },
    cell('Time', time(delivery.created_at)),
    cell('Event', delivery.event_type),
    cell('Event id', h('code', {}, delivery.event_id)),
    cell('Attempt', String(delivery.attempt)),
    cell('Status', badge(delivery.status)),
    cell('Response', delivery.response_status === null ? '—' : String(delivery.response_status)),
    delivery.error ? h('td', { 'data-label': 'Error', class: 'error-cell' }, h('span', {}, delivery.error)) : cell('Error', '—'),
    cell('', resend),
  );
}

/**
 * Sends the delivery's event to the endpoint once more (POST .../deliveries/{id}/resend): a new
 * attempt, recorded as a new row once made. A disabled endpoint or an expired event is refused (409).
 */
async function resendDelivery(open: OpenDeliveries, delivery: Delivery, button: HTMLButtonElement): Promise<void> {
  clearError();
  try {
    const queued = await busy([button], () =>
      gateway((platform) =>
        webhooksOf(platform, open.section.service).POST('/webhook-endpoints/{id}/deliveries/{delivery_id}/resend', {
          params: { path: { id: open.endpoint.id, delivery_id: delivery.id } },
        }),
      ),
    );
    announce(`Event ${queued.event_id} (${queued.event_type}) ${queued.status} again for ${open.endpoint.url} as attempt ${queued.attempt}.`);
  } catch (err) {
    showError(err, `Could not resend delivery ${shortId(delivery.id)}`);
  }
  await loadDeliveries(open.section, open).catch(() => undefined);
}

async function loadDeliveries(section: ServiceSection, open: OpenDeliveries): Promise<void> {
  const at = generation;
  const { items, complete } = await allPages((cursor) =>
    gateway((platform) =>
      webhooksOf(platform, section.service).GET('/webhook-endpoints/{id}/deliveries', { params: { ...ofEndpoint(open.endpoint), query: pageAt(cursor) } }),
    ),
  );
  if (at !== generation || !open.body.isConnected) return;
  const latest = items.reverse().slice(0, DELIVERIES_SHOWN);
  const key = JSON.stringify(latest);
  if (key === open.shown) return;
  open.shown = key;
  // Keyboard focus on a row's button stays on that delivery's new row.
  const focused = document.activeElement instanceof HTMLElement && open.body.contains(document.activeElement) ? document.activeElement.closest('tr') : null;
  open.body.replaceChildren(...latest.map((delivery) => deliveryRow(open, delivery)));
  if (focused?.dataset.deliveryId)
    [...open.body.rows]
      .find((row) => row.dataset.deliveryId === focused.dataset.deliveryId)
      ?.querySelector('button')
      ?.focus();
  // New attempts change the chart too: it is read again only then.
  open.chart.refresh().catch(() => undefined);
  open.note.textContent =
    latest.length === 0
      ? 'No delivery yet.'
      : !complete || items.length > DELIVERIES_SHOWN
        ? `The latest ${DELIVERIES_SHOWN} attempts, newest first.`
        : 'Newest first; one row per attempt.';
}

function pollDeliveries(section: ServiceSection, open: OpenDeliveries): void {
  const at = generation;
  open.timer = window.setTimeout(() => {
    if (at !== generation || openDeliveries.get(open.endpoint.id) !== open) return;
    loadDeliveries(section, open)
      .catch(() => undefined)
      .finally(() => {
        if (openDeliveries.get(open.endpoint.id) === open) pollDeliveries(section, open);
      });
  }, DELIVERIES_POLL_MS);
}

function closeDeliveries(endpointId: string): void {
  const open = openDeliveries.get(endpointId);
  if (open?.timer !== undefined) window.clearTimeout(open.timer);
  open?.chart.destroy();
  openDeliveries.delete(endpointId);
}

function endpointCard(section: ServiceSection, endpoint: WebhookEndpoint): HTMLElement {
  const titleId = `endpoint-${endpoint.id}-title`;
  const deliveriesId = `endpoint-${endpoint.id}-deliveries`;
  const deliveriesTitleId = `${deliveriesId}-title`;
  const body = h('tbody');
  const note = h('p', { class: 'hint' }, 'Loading deliveries…');
  const chartSlot = h('div');
  const deliveries = h(
    'div',
    { id: deliveriesId, hidden: true },
    chartSlot,
    h('h5', { id: deliveriesTitleId }, 'Latest deliveries'),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'responsive', 'aria-labelledby': deliveriesTitleId },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ...['Time', 'Event', 'Event id', 'Attempt', 'Status', 'Response', 'Error'].map((name) => h('th', { scope: 'col' }, name)),
            h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')),
          ),
        ),
        body,
      ),
    ),
    note,
  );
  const toggleDeliveries = h('button', { type: 'button', class: 'secondary', 'aria-expanded': 'false', 'aria-controls': deliveriesId }, 'Show deliveries');
  const toggleEnabled = h('button', { type: 'button', class: 'secondary' }, endpoint.enabled ? 'Disable' : 'Enable');
  const remove = h('button', { type: 'button', class: 'danger' }, 'Delete');
  const card = h(
    'article',
    { class: 'card', 'aria-labelledby': titleId, 'data-endpoint-id': endpoint.id },
    h(
      'h4',
      { id: titleId, class: 'mono', tabindex: -1 },
      h('a', { href: endpointHref(section.service.name, endpoint.id), title: 'This endpoint’s address' }, endpoint.url),
    ),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Events'),
      h('dd', {}, endpoint.events.join(', ')),
      h('dt', {}, 'State'),
      h('dd', {}, badge(endpoint.enabled ? 'enabled' : 'disabled')),
      h('dt', {}, 'Created'),
      h('dd', {}, time(endpoint.created_at)),
      h('dt', {}, 'Id'),
      h('dd', {}, h('code', {}, endpoint.id)),
    ),
    h('div', { class: 'actions' }, toggleDeliveries, toggleEnabled, remove),
    deliveries,
  );

  toggleDeliveries.addEventListener('click', () => {
    const show = deliveries.hidden;
    deliveries.hidden = !show;
    toggleDeliveries.setAttribute('aria-expanded', String(show));
    toggleDeliveries.textContent = show ? 'Hide deliveries' : 'Show deliveries';
    if (!show) {
      if (shownEndpoint?.id === endpoint.id) shownEndpoint = undefined;
      if (!restoring) setWorkspaceAddress('webhooks', shownEndpoint);
      return closeDeliveries(endpoint.id);
    }
    if (!restoring) {
      shownEndpoint = { kind: 'endpoint', service: section.service.name, id: endpoint.id };
      setWorkspaceAddress('webhooks', shownEndpoint);
    }
    const open: OpenDeliveries = { section, endpoint, body, note, chart: deliveriesChart(section, endpoint), shown: '' };
    chartSlot.replaceChildren(open.chart.section);
    closeDeliveries(endpoint.id);
    openDeliveries.set(endpoint.id, open);
    loadDeliveries(section, open).then(
      () => pollDeliveries(section, open),
      (err: unknown) => showError(err, 'Could not load the deliveries'),
    );
  });
  toggleEnabled.addEventListener('click', () => {
    clearError();
    void busy([toggleEnabled], () =>
      gateway((platform) =>
        webhooksOf(platform, section.service).PATCH('/webhook-endpoints/{id}', { params: ofEndpoint(endpoint), body: { enabled: !endpoint.enabled } }),
      ),
    ).then(
      async (updated) => {
        announce(`Endpoint ${updated.url} ${updated.enabled ? 'enabled' : 'disabled'}.`);
        await loadEndpoints(section);
      },
      (err: unknown) => showError(err, 'Could not change the endpoint'),
    );
  });
  remove.addEventListener('click', () => void deleteEndpoint(section, endpoint, remove));
  return card;
}

/** The endpoint's attempts per hour or day by outcome (GET /webhook-endpoints/{id}/stats/series). */
function deliveriesChart(section: ServiceSection, endpoint: WebhookEndpoint): SeriesChartView {
  return seriesChartView({
    id: `endpoint-${endpoint.id}-chart`,
    title: 'Delivery attempts by outcome',
    noun: { one: 'attempt', many: 'attempts' },
    read: async (interval) =>
      deliverySeriesChart(
        await gateway((platform) =>
          webhooksOf(platform, section.service).GET('/webhook-endpoints/{id}/stats/series', { params: { ...ofEndpoint(endpoint), query: { interval } } }),
        ),
      ),
  });
}

const endpointHref = (service: string, id: string): string => routeHash(workspaceRoute(currentWorkspace().id, 'webhooks', { kind: 'endpoint', service, id }));

/** Shows the endpoint an address names: its service's list read again, its card's deliveries shown. */
export async function followWebhookAddress(detail: Extract<Detail, { kind: 'endpoint' }> | undefined): Promise<void> {
  if (detail === undefined) return;
  const section = sections.get(detail.service);
  if (!section) throw new Error(`The console shows no webhook endpoints of a service named ${detail.service}.`);
  await loadEndpoints(section);
  const card = [...section.list.children].find((child): child is HTMLElement => child instanceof HTMLElement && child.dataset.endpointId === detail.id);
  if (!card) throw new Error(`No such ${detail.service} webhook endpoint in this workspace.`);
  const toggle = card.querySelector<HTMLButtonElement>('button[aria-expanded]');
  if (toggle?.getAttribute('aria-expanded') === 'false') toggle.click();
  card.querySelector<HTMLElement>('h4')?.focus();
}

/** The endpoint whose deliveries were shown last, for the tab's address. */
export const shownWebhook = (): Detail | undefined => shownEndpoint;

async function deleteEndpoint(section: ServiceSection, endpoint: WebhookEndpoint, button: HTMLButtonElement): Promise<void> {
  const confirmed = await confirmAction({
    title: 'Delete this webhook endpoint?',
    message: `${endpoint.url} stops receiving ${section.service.name} events at once, pending retries included.`,
    confirmLabel: 'Delete endpoint',
  });
  if (!confirmed) return;
  clearError();
  try {
    await busy([button], () =>
      gateway((platform) => webhooksOf(platform, section.service).DELETE('/webhook-endpoints/{id}', { params: ofEndpoint(endpoint) })),
    );
    closeDeliveries(endpoint.id);
    announce(`Endpoint ${endpoint.url} deleted.`);
    await loadEndpoints(section);
  } catch (err) {
    showError(err, 'Could not delete the endpoint');
  }
}

async function loadEndpoints(section: ServiceSection): Promise<void> {
  const at = generation;
  const { items } = await allPages((cursor) =>
    gateway((platform) => webhooksOf(platform, section.service).GET('/webhook-endpoints', { params: { query: pageAt(cursor) } })),
  );
  if (at !== generation) return;
  // Deliveries shown before a reload are shown again.
  const wasOpen = new Set(openDeliveries.keys());
  for (const id of wasOpen) closeDeliveries(id);
  const cards = items.map((endpoint) => endpointCard(section, endpoint));
  section.list.replaceChildren(...cards);
  section.empty.hidden = items.length > 0;
  // Shown again as they were: no new address.
  restoring = true;
  try {
    for (const card of cards) {
      if (wasOpen.has(card.dataset.endpointId ?? '')) card.querySelector<HTMLButtonElement>('button[aria-expanded]')?.click();
    }
  } finally {
    restoring = false;
  }
}

/** The form of a new endpoint; `onCreated` closes it before the secret is shown. */
function createForm(
  section: ServiceSection,
  secretPanel: HTMLElement,
  secretInput: HTMLInputElement,
  onCreated: () => void,
): { form: HTMLFormElement; cancel: HTMLButtonElement } {
  const { service } = section;
  const id = (name: string) => `webhook-${service.name}-${name}`;
  const all = h('input', { type: 'checkbox', id: id('all'), name: 'events-all', checked: true });
  const types = service.event_types.map((type) =>
    h('input', { type: 'checkbox', id: id(`event-${type.replace(/\W/g, '-')}`), name: 'events', value: type, disabled: true }),
  );
  all.addEventListener('change', () => {
    for (const box of types) box.disabled = all.checked;
  });
  const submit = h('button', { type: 'submit' }, 'Create endpoint');
  const cancel = h('button', { type: 'button', class: 'secondary' }, 'Cancel');
  const form = h(
    'form',
    { id: id('form'), class: 'card stack', 'aria-labelledby': id('form-title'), hidden: true },
    h('h5', { id: id('form-title') }, 'New endpoint'),
    h(
      'div',
      { class: 'field' },
      h('label', { for: id('url') }, 'Endpoint URL'),
      h('input', { id: id('url'), name: 'url', type: 'url', required: true, autocomplete: 'off', spellcheck: 'false' }),
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Events'),
      h('label', { class: 'choice', for: id('all') }, all, 'All events (*)'),
      h('div', { class: 'scope-groups' }, ...types.map((box) => h('label', { class: 'choice', for: box.id }, box, box.value))),
    ),
    h('div', { class: 'actions' }, submit, cancel),
  );
  form.addEventListener('reset', () => {
    for (const box of types) box.disabled = true;
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    clearError();
    const url = (form.elements.namedItem('url') as HTMLInputElement).value.trim();
    // The boxes are the meta's event types of this service (contract section 11).
    const events = (all.checked ? ['*'] : types.filter((box) => box.checked).map((box) => box.value)) as WebhookEventType[];
    if (events.length === 0) return showError(new Error('Choose at least one event, or All events.'));
    void busy([submit], () => gateway((platform) => webhooksOf(platform, service).POST('/webhook-endpoints', { body: { url, events } }))).then(
      async (created) => {
        secretInput.value = created.secret ?? '';
        onCreated();
        secretPanel.hidden = false;
        secretPanel.querySelector<HTMLElement>('h4')?.focus();
        announce(`Endpoint ${created.url} created. Copy its signing secret now: it is shown only once.`);
        await loadEndpoints(section);
      },
      (err: unknown) => showError(err, 'Could not create the endpoint'),
    );
  });
  return { form, cancel };
}

function secretPanel(service: ServiceMeta): { panel: HTMLElement; input: HTMLInputElement } {
  const inputId = `webhook-${service.name}-secret`;
  const titleId = `${inputId}-title`;
  const input = h('input', { id: inputId, type: 'text', readonly: true, spellcheck: 'false', autocomplete: 'off' });
  const copy = h('button', { type: 'button' }, 'Copy secret');
  const done = h('button', { type: 'button', class: 'secondary' }, 'I have stored it');
  const panel = h(
    'section',
    { class: 'card secret', 'aria-labelledby': titleId, hidden: true },
    h('h4', { id: titleId, tabindex: -1 }, 'Copy the signing secret now'),
    h('p', {}, 'It is shown only this once. Receivers verify each delivery with it (Standard Webhooks).'),
    h('div', { class: 'copy-row' }, h('label', { for: inputId, class: 'visually-hidden' }, 'Signing secret'), input, copy),
    done,
  );
  copy.addEventListener('click', () => {
    void copyText(input).then((copied) =>
      copied ? announce('Secret copied to the clipboard.') : showError(new Error('The browser refused to copy; select the secret and copy it by hand.')),
    );
  });
  done.addEventListener('click', () => {
    input.value = '';
    panel.hidden = true;
    announce('Secret removed from the page.');
  });
  return { panel, input };
}

function serviceSection(service: ServiceMeta): HTMLElement {
  const titleId = `webhooks-${service.name}-title`;
  const title = h('h3', { id: titleId }, `${service.name} service webhooks`);
  const path = h('p', { class: 'hint' }, h('code', {}, `${service.prefix}/webhook-endpoints`));
  if (!service.webhooks) {
    return h(
      'section',
      { class: 'card', 'aria-labelledby': titleId },
      title,
      path,
      h(
        'p',
        {},
        'Webhook endpoints are not available on this service yet: the gateway does not route them. They appear here once the service and the contract route table have them.',
      ),
    );
  }
  const list = h('div', { class: 'stack' });
  const empty = h('p', { class: 'hint' }, 'No endpoint yet.');
  const section: ServiceSection = { service, list, empty };
  sections.set(service.name, section);
  const { panel, input } = secretPanel(service);
  const refresh = h('button', { type: 'button', class: 'secondary' }, 'Refresh endpoints');
  const { form, cancel } = createForm(section, panel, input, () => toggle.close());
  const newEndpoint = h('button', { type: 'button', 'aria-expanded': 'false', 'aria-controls': form.id }, 'New endpoint');
  const toggle = formToggle(newEndpoint, form, cancel);
  refresh.addEventListener('click', () => {
    clearError();
    loadEndpoints(section).then(
      () => announce(`${service.name} endpoints refreshed.`),
      (err: unknown) => showError(err, 'Could not load the endpoints'),
    );
  });
  return h(
    'section',
    { class: 'card', 'aria-labelledby': titleId },
    title,
    path,
    h('div', { class: 'list-head' }, h('h4', {}, 'Endpoints'), newEndpoint, refresh),
    form,
    panel,
    empty,
    list,
  );
}

export function initWebhooksView(): void {
  const container = byId('webhook-services');
  clear(container);
  sections.clear();
  container.append(...getMeta().services.map(serviceSection));
}

/** Loads every service's endpoints the first time the tab is shown for this workspace. */
export async function showWebhooks(): Promise<void> {
  if (loaded) return;
  loaded = true;
  for (const section of sections.values()) {
    try {
      await loadEndpoints(section);
    } catch (err) {
      loaded = false;
      if (err instanceof PlatformApiError && err.status === 404) {
        section.empty.textContent = 'This service does not answer for webhook endpoints yet.';
        section.empty.hidden = false;
      } else showError(err, `Could not load the ${section.service.name} endpoints`);
    }
  }
}

export function resetWebhooksView(): void {
  generation++;
  loaded = false;
  shownEndpoint = undefined;
  for (const id of [...openDeliveries.keys()]) closeDeliveries(id);
  initWebhooksView();
}
