import { serviceTabs, tocView, type Service } from './navigation.js';
import { serviceView, unavailableView } from './service.view.js';
import { hostileDocument, ticketsDocument } from './test/documents.js';
import { elements, find, html, text } from './test/html.js';
import type { ViewElement } from './view.js';

const ORIGIN = 'http://127.0.0.1:8080';
const events: Service = { name: 'events', prefix: '/events/v0', document: '/docs/events.json' };

describe("a service's reference", () => {
  const view = serviceView(events, ticketsDocument(), ORIGIN);

  test('a head with title, versions, a link to the document, the base URL and the introduction', () => {
    expect(view.attributes).toEqual({ 'aria-labelledby': 'service-title' });
    const head = view.children[0] as ViewElement;
    expect(html(head)).toBe(
      '<header class="service-head"><h1 tabindex="-1" id="service-title">Events API</h1>' +
        '<p class="meta">Version 0 (beta) · OpenAPI 3.1.0 · <a href="/docs/events.json">document (JSON)</a></p>' +
        '<p>Base URL: <code>http://127.0.0.1:8080/events/v0</code></p>' +
        '<div class="markdown"><p>Events and tickets.</p><h2>Authentication</h2><p>Send a key.</p></div></header>',
    );
  });

  test('then authentication, the operations by tag, the webhook events and the schemas', () => {
    const sections = view.children.filter((c): c is ViewElement => typeof c !== 'string' && (c.tag === 'h2' || c.tag === 'section'));
    expect(sections.map((c) => (c.tag === 'h2' ? `## ${text(c)} ${c.attributes.id ?? ''}`.trim() : c.attributes.id))).toEqual([
      '## Authentication',
      '## Events tag-Events',
      'op-createEvent',
      '## Tickets tag-Tickets',
      'op-listTickets',
      'op-issueTicket',
      '## Other tag-Other',
      'op-get-/healthz',
      '## Webhook events tag-webhook-events',
      'webhook-ticket.validated',
      '## Schemas tag-schemas',
      'schema-Ticket',
      'schema-TicketInput',
      'schema-TicketList',
      'schema-Error',
    ]);
    expect(find(view, 'div', { class: 'markdown' }).map(text)).toEqual(
      expect.arrayContaining(['An API key: Authorization: Bearer plk_….', 'What the service sends.']),
    );
  });

  test("paths are shown under the gateway prefix from the document's server URL, or the service's prefix when it has none", () => {
    expect(find(view, 'span', { class: 'path' }).map(text).slice(0, 2)).toEqual(['/events/v0/events', '/events/v0/events/{id}/tickets']);
    const serverless = serviceView(events, { ...ticketsDocument(), servers: undefined, info: undefined }, ORIGIN);
    expect(text(find(serverless, 'code')[0]!)).toBe('http://127.0.0.1:8080/events/v0');
    expect(text(find(serverless, 'h1')[0]!)).toBe('events');
    expect(text(find(serverless, 'p', { class: 'meta' })[0]!)).toBe('Version ? · OpenAPI 3.1.0 · document (JSON)');
    const elsewhere = serviceView(events, { ...ticketsDocument(), servers: [{ url: 'https://api.example.com/v0/' }] }, ORIGIN);
    expect(find(elsewhere, 'span', { class: 'path' }).map(text)[0]).toBe('https://api.example.com/v0/events');
  });
});

describe('an unavailable service', () => {
  test('says why and offers to ask again', () => {
    expect(html(unavailableView(events, 'The events service cannot give its API document right now.'))).toBe(
      '<section class="notice"><h1 tabindex="-1" id="service-title">events: unavailable</h1>' +
        "<p>The events service cannot give its API document right now. The other services' references are unaffected.</p>" +
        '<button type="button">Try again</button></section>',
    );
  });
});

describe('a hostile document renders inert', () => {
  const doc = hostileDocument();
  const attack = (tag: string): string => `"'><script>alert('${tag}')</script><img src=x onerror=alert(1)>`;
  // The whole page for it: tabs, sidebar and reference, every folded part opened.
  const page: ViewElement = {
    tag: 'div',
    attributes: {},
    children: [...serviceTabs([events], new Map([['events', { doc }]]), 'events'), ...tocView(events, doc), serviceView(events, doc, ORIGIN)],
  };
  const all = elements(page);

  test('its strings never become elements or attributes: only the page’s own tags and attribute names appear', () => {
    const tags = new Set(all.map((e) => e.tag));
    for (const tag of tags)
      expect([
        'a',
        'article',
        'button',
        'code',
        'details',
        'div',
        'h1',
        'h2',
        'h3',
        'h4',
        'header',
        'li',
        'p',
        'pre',
        'section',
        'span',
        'strong',
        'summary',
        'table',
        'tbody',
        'td',
        'th',
        'thead',
        'tr',
        'ul',
      ]).toContain(tag);
    const names = new Set(all.flatMap((e) => Object.keys(e.attributes)));
    expect(['aria-current', 'aria-labelledby', 'class', 'data-copy', 'data-sample', 'data-search', 'href', 'id', 'open', 'scope', 'tabindex', 'type']).toEqual(
      expect.arrayContaining([...names]),
    );
  });

  test('every string it shows is text: the markup reads as escaped characters', () => {
    const shown = all.map((e) => e.children.filter((c) => typeof c === 'string').join('')).join('\n') + text(page);
    for (const tag of [
      'title',
      'version',
      'description',
      'heading',
      'item',
      'th',
      'td',
      'tag',
      'tag description',
      'path',
      'summary',
      'operation description',
      'parameter',
      'in',
      'parameter description',
      'response',
      'header',
      'header description',
      'webhook',
      'webhook summary',
      'security',
      'schema description',
      'property',
      'property description',
      'schema',
    ]) {
      expect({ tag, shown: shown.includes(attack(tag)) }).toEqual({ tag, shown: true });
    }
    for (const tag of ['openapi', 'pattern', 'default', 'enum', 'const', 'example', 'schema example']) {
      expect({ tag, shown: shown.includes(JSON.stringify(attack(tag)).slice(1, -1)) || shown.includes(attack(tag)) }).toEqual({ tag, shown: true });
    }
    // Outside attribute values (where quotes are escaped, so each value ends at its own quote), no markup of the document's.
    const markup = html(page).replace(/="[^"]*"/g, '=""');
    expect(markup).not.toMatch(/<script|<img/);
    expect(markup).toContain("&lt;script&gt;alert('title')&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;");
  });

  test('strings in attribute values stay values (quotes escaped by the browser); ids and search words hold them verbatim', () => {
    const operation = find(page, 'section', { class: 'operation' })[0]!;
    expect(operation.attributes.id).toBe(`op-${attack('operationId')}`);
    expect(html({ ...operation, children: [] })).toBe(
      `<section class="operation" id="op-&quot;'><script>alert('operationId')</script><img src=x onerror=alert(1)>" data-search="${operation.attributes['data-search']!.replace(/"/g, '&quot;')}"></section>`,
    );
  });

  test('links go only to this page or this origin: no script URL, no other host', () => {
    const hrefs = all.filter((e) => e.tag === 'a').map((e) => e.attributes.href!);
    expect(hrefs.length).toBeGreaterThan(3);
    for (const href of hrefs) expect(href).toMatch(/^(#|\/(?![/\\]))/);
    expect(hrefs).toContain('#ok');
    expect(text(page)).toContain('x (javascript:alert(2))');
    expect(text(page)).toContain('y (//evil.example) w (/\\evil.example)');
    // A javascript: server URL is shown as text only.
    expect(text(find(page, 'code')[0]!)).toBe('javascript:alert(3)/');
  });
});
