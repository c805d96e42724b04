// Finding one's way: the service tabs, operations grouped by tag, the sidebar's table of contents,
// and the `#/service/kind/id` addresses its links use.
import { decodedOrAsIs, operationsOf, type OpenApiDocument, type OperationEntry, type TagObject } from './openapi.js';
import { operationAnchor, operationSearchText, webhookSearchText } from './operation.view.js';
import { el, type ViewElement, type ViewNode } from './view.js';

/** A service as /docs/services.json lists it. */
export interface Service {
  name: string;
  prefix: string;
  /** Where its OpenAPI document is, e.g. `/docs/events.json`. */
  document: string;
}

/** A service's document once asked for: the document, or why it could not be had. */
export interface DocumentEntry {
  doc?: OpenApiDocument;
  error?: string;
}

export interface OperationGroup {
  tag: TagObject;
  operations: OperationEntry[];
}

/** Operations grouped by their first tag, in the document's tag order; untagged ones under "Other", tags without operations left out. */
export function groups(doc: OpenApiDocument): OperationGroup[] {
  const byTag = new Map<string, OperationGroup>((doc.tags ?? []).map((tag) => [tag.name, { tag, operations: [] }]));
  for (const entry of operationsOf(doc)) {
    const name = entry.operation.tags?.[0] ?? 'Other';
    let group = byTag.get(name);
    if (!group) byTag.set(name, (group = { tag: { name }, operations: [] }));
    group.operations.push(entry);
  }
  return [...byTag.values()].filter((group) => group.operations.length);
}

/** The sidebar: a list per tag, then the webhook events and the schemas, each linking to its section. */
export function tocView(service: Service, doc: OpenApiDocument): ViewElement[] {
  // An entry matches the filter exactly when its section does.
  const link = (kind: string, id: string, search: string, ...label: ViewNode[]): ViewElement =>
    el('li', { 'data-search': search }, el('a', { href: `#/${service.name}/${kind}/${id}` }, ...label));
  const out = groups(doc).map((group) =>
    el(
      'div',
      { class: 'toc-group' },
      el('h2', {}, group.tag.name),
      el(
        'ul',
        {},
        group.operations.map((entry) =>
          link(
            'op',
            operationAnchor(entry),
            operationSearchText(entry),
            el('span', { class: `method ${entry.method}` }, entry.method.toUpperCase()),
            ` ${entry.operation.summary ?? entry.path}`,
          ),
        ),
      ),
    ),
  );
  const webhooks = Object.entries(doc.webhooks ?? {});
  if (webhooks.length) {
    const items = webhooks.map(([name, item]) => link('webhook', name, webhookSearchText(name, item.post ?? {}), name));
    out.push(el('div', { class: 'toc-group' }, el('h2', {}, 'Webhook events'), el('ul', {}, items)));
  }
  const schemas = Object.keys(doc.components?.schemas ?? {});
  if (schemas.length)
    out.push(
      el(
        'div',
        { class: 'toc-group' },
        el('h2', {}, 'Schemas'),
        el(
          'ul',
          {},
          schemas.map((name) => link('schema', name, name.toLowerCase(), name)),
        ),
      ),
    );
  return out;
}

/** The service tabs: the current one marked, an unavailable one struck through. */
export function serviceTabs(services: readonly Service[], documents: ReadonlyMap<string, DocumentEntry>, current: string | null): ViewElement[] {
  return services.map((service) => {
    const entry = documents.get(service.name);
    return el(
      'li',
      {},
      el(
        'a',
        { href: `#/${service.name}`, 'aria-current': service.name === current ? 'page' : undefined, class: entry?.error ? 'unavailable' : undefined },
        entry?.doc?.info?.title ?? service.name,
        entry?.error ? ' (unavailable)' : '',
      ),
    );
  });
}

/** What an address names: `#/events/op/createEvent` is the service `events` and the element `op-createEvent`. */
export function parseHash(hash: string): { service?: string; targetId?: string } {
  const [, service, kind, ...rest] = decodedOrAsIs(hash).split('/');
  return { service, targetId: kind && rest.length ? `${kind}-${rest.join('/')}` : undefined };
}
