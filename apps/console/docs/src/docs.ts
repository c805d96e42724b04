// The API reference page: reads each service's OpenAPI 3.1 document from /docs/{service}.json and
// shows it, with service tabs, routing by hash (#/service/kind/id) and a filter. Nothing is
// fetched from another origin; the views are built by the modules beside this one.
import { byId, render } from './dom.js';
import { parseHash, serviceTabs, tocView, type DocumentEntry, type Service } from './navigation.js';
import type { OpenApiDocument } from './openapi.js';
import { serviceView, unavailableView } from './service.view.js';

const state: { services: Service[]; documents: Map<string, DocumentEntry>; current: string | null } = {
  services: [],
  documents: new Map(),
  current: null,
};

function renderTabs(): void {
  byId('service-tabs').replaceChildren(...serviceTabs(state.services, state.documents, state.current).map(render));
}

function renderUnavailable(service: Service, error: string): void {
  const notice = render(unavailableView(service, error)) as HTMLElement;
  const retry = notice.querySelector('button');
  retry?.addEventListener('click', () => {
    retry.disabled = true;
    void loadDocument(service).then(() => {
      state.current = null;
      route();
    });
  });
  byId('toc').replaceChildren();
  byId('reference').replaceChildren(notice);
}

function showService(name: string | undefined): void {
  const service = state.services.find((s) => s.name === name) ?? state.services.find((s) => state.documents.get(s.name)?.doc) ?? state.services[0];
  if (!service) return;
  if (state.current === service.name) return;
  state.current = service.name;
  const entry = state.documents.get(service.name);
  renderTabs();
  byId<HTMLInputElement>('filter').value = '';
  if (!entry?.doc) {
    renderUnavailable(service, entry?.error ?? 'not loaded');
    return;
  }
  byId('toc').replaceChildren(...tocView(service, entry.doc).map(render));
  byId('reference').replaceChildren(render(serviceView(service, entry.doc, location.origin)));
  document.title = `${entry.doc.info?.title ?? service.name} · API reference`;
}

function route(): void {
  const { service, targetId } = parseHash(location.hash);
  const before = state.current;
  showService(service);
  const target = targetId ? document.getElementById(targetId) : null;
  if (target) {
    for (let node = target.parentElement; node; node = node.parentElement) if (node instanceof HTMLDetailsElement) node.open = true;
    target.scrollIntoView({ block: 'start' });
  } else if (before !== state.current) {
    window.scrollTo(0, 0);
  }
}

function applyFilter(): void {
  const query = byId<HTMLInputElement>('filter').value.trim().toLowerCase();
  for (const node of document.querySelectorAll<HTMLElement>('#toc li, #reference [data-search]')) {
    node.hidden = query !== '' && !(node.getAttribute('data-search') ?? '').includes(query);
  }
}

/** A sample's Copy button: its text to the clipboard, or, where the page has none (plain http to another host), selected for Ctrl+C. */
function copySample(event: Event): void {
  const button = event.target instanceof Element ? event.target.closest<HTMLButtonElement>('button[data-copy]') : null;
  const code = button?.closest('.sample')?.querySelector('pre');
  if (!button || !code) return;
  const done = (label: string): void => {
    button.textContent = label;
    setTimeout(() => (button.textContent = 'Copy'), 2_000);
  };
  const select = (): void => {
    const range = document.createRange();
    range.selectNodeContents(code);
    window.getSelection()?.removeAllRanges();
    window.getSelection()?.addRange(range);
    done('Selected: press Ctrl+C');
  };
  // `navigator.clipboard` is missing outside secure contexts, whatever the types say.
  const clipboard = navigator.clipboard as Clipboard | undefined;
  if (!clipboard) return select();
  clipboard.writeText(code.textContent ?? '').then(() => done('Copied'), select);
}

/** The gateway's error message in a JSON error body, if it is one. */
function errorMessage(body: unknown): string | undefined {
  const message = (body as { error?: { message?: unknown } } | undefined)?.error?.message;
  return typeof message === 'string' ? message : undefined;
}

async function loadDocument(service: Service): Promise<void> {
  try {
    const res = await fetch(service.document, { headers: { accept: 'application/json' } });
    const body: unknown = await res.json().catch(() => undefined);
    if (!res.ok) throw new Error(errorMessage(body) ?? `The ${service.name} service did not give its API document (HTTP ${res.status}).`);
    state.documents.set(service.name, { doc: body as OpenApiDocument });
  } catch (err) {
    // A network failure says "Failed to fetch": make it a sentence like the gateway's messages.
    const message = err instanceof Error ? err.message : String(err);
    state.documents.set(service.name, { error: /[.!?]$/.test(message) ? message : `${message}.` });
  }
}

async function main(): Promise<void> {
  const status = byId('status');
  try {
    const res = await fetch('/docs/services.json', { headers: { accept: 'application/json' } });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    state.services = ((await res.json()) as { services: Service[] }).services;
  } catch (err) {
    status.textContent = `The list of services could not be loaded (${err instanceof Error ? err.message : String(err)}).`;
    return;
  }
  await Promise.all(state.services.map(loadDocument));
  const unavailable = state.services.filter((service) => state.documents.get(service.name)?.error);
  status.textContent = unavailable.length ? `Unavailable right now: ${unavailable.map((s) => s.name).join(', ')}.` : '';
  status.hidden = unavailable.length === 0;
  window.addEventListener('hashchange', route);
  byId('filter').addEventListener('input', applyFilter);
  byId('reference').addEventListener('click', copySample);
  route();
}

void main();
