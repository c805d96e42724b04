// A service's whole reference: its introduction, authentication, operations by tag, webhook
// events and schemas; or, when its document could not be had, a notice saying so.
import { markdown } from './markdown.js';
import { groups, type Service } from './navigation.js';
import type { OpenApiDocument } from './openapi.js';
import { operationView, schemaCard, webhookView } from './operation.view.js';
import { el, type Child, type ViewElement } from './view.js';

/** The reference of one service; `origin` is the page's, against which the document's server URL is read. */
export function serviceView(service: Service, doc: OpenApiDocument, origin: string): ViewElement {
  const server = doc.servers?.[0]?.url ?? service.prefix;
  const baseUrl = new URL(server, origin).href.replace(/\/$/, '');
  const parts: Child[] = [
    el(
      'header',
      { class: 'service-head' },
      el('h1', { tabindex: '-1', id: 'service-title' }, doc.info?.title ?? service.name),
      el('p', { class: 'meta' }, `Version ${doc.info?.version ?? '?'} · OpenAPI ${doc.openapi} · `, el('a', { href: service.document }, 'document (JSON)')),
      el('p', {}, 'Base URL: ', el('code', {}, baseUrl)),
      markdown(doc.info?.description, 2),
    ),
  ];
  // The scheme the document's operations require: an API key (`bearer`) or the admin token (`adminToken`).
  const schemeName = Object.keys(doc.security?.[0] ?? {})[0] ?? 'bearer';
  const scheme = doc.components?.securitySchemes?.[schemeName];
  if (scheme) parts.push(el('h2', {}, 'Authentication'), markdown(scheme.description));
  const target = { baseUrl, origin, service: service.name };
  for (const group of groups(doc)) {
    parts.push(el('h2', { id: `tag-${group.tag.name}` }, group.tag.name), group.tag.description ? markdown(group.tag.description) : null);
    for (const entry of group.operations) parts.push(operationView(doc, target, entry));
  }
  const webhooks = Object.entries(doc.webhooks ?? {});
  if (webhooks.length) {
    parts.push(el('h2', { id: 'tag-webhook-events' }, 'Webhook events'));
    const tag = doc.tags?.find((t) => t.name === 'Webhook events');
    if (tag?.description) parts.push(markdown(tag.description));
    for (const [name, item] of webhooks) if (item.post) parts.push(webhookView(doc, name, item.post));
  }
  const schemas = Object.entries(doc.components?.schemas ?? {});
  if (schemas.length) {
    parts.push(el('h2', { id: 'tag-schemas' }, 'Schemas'));
    for (const [name, schema] of schemas) parts.push(schemaCard(doc, name, schema));
  }
  return el('article', { 'aria-labelledby': 'service-title' }, parts);
}

/** In place of a service whose document could not be had: why, and a button to ask again. */
export function unavailableView(service: Service, error: string): ViewElement {
  return el(
    'section',
    { class: 'notice' },
    el('h1', { tabindex: '-1', id: 'service-title' }, `${service.name}: unavailable`),
    el('p', {}, `${error} The other services' references are unaffected.`),
    el('button', { type: 'button' }, 'Try again'),
  );
}
