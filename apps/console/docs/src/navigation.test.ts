import { groups, parseHash, serviceTabs, tocView, type DocumentEntry, type Service } from './navigation.js';
import { operationsOf } from './openapi.js';
import { operationView, webhookView } from './operation.view.js';
import { ticketsDocument } from './test/documents.js';
import { find, html, text } from './test/html.js';

const doc = ticketsDocument();
const events: Service = { name: 'events', prefix: '/events/v0', document: '/docs/events.json' };

describe('operations', () => {
  test("by path in the document's order, methods in get, post, put, patch, delete order", () => {
    expect(operationsOf(doc).map(({ method, path }) => `${method} ${path}`)).toEqual([
      'get /events/{id}/tickets',
      'post /events/{id}/tickets',
      'post /events',
      'get /healthz',
    ]);
  });

  test("grouped by their first tag in the document's tag order; untagged under Other; tags without operations left out", () => {
    expect(groups(doc).map((group) => [group.tag.name, group.operations.map((e) => e.operation.operationId ?? e.path)])).toEqual([
      ['Events', ['createEvent']],
      ['Tickets', ['listTickets', 'issueTicket']],
      ['Other', ['/healthz']],
    ]);
    expect(groups(doc)[0]!.tag.description).toBe('Events that tickets are issued for.');
    expect(groups({ openapi: '3.1.0' })).toEqual([]);
  });
});

describe('sidebar', () => {
  test('a list per tag, then webhook events and schemas, each entry linking to its section', () => {
    const toc = tocView(events, doc);
    expect(toc.map((group) => text(find(group, 'h2')[0]!))).toEqual(['Events', 'Tickets', 'Other', 'Webhook events', 'Schemas']);
    expect(toc.flatMap((group) => find(group, 'a').map((a) => a.attributes.href))).toEqual([
      '#/events/op/createEvent',
      '#/events/op/listTickets',
      '#/events/op/issueTicket',
      '#/events/op/get-/healthz',
      '#/events/webhook/ticket.validated',
      '#/events/schema/Ticket',
      '#/events/schema/TicketInput',
      '#/events/schema/TicketList',
      '#/events/schema/Error',
    ]);
    expect(html(find(toc[1]!, 'a')[1]!)).toBe('<a href="#/events/op/issueTicket"><span class="method post">POST</span> Issue a ticket</a>');
    expect(text(find(toc[2]!, 'a')[0]!)).toBe('GET /healthz');
  });

  test('an entry matches the filter on the same words as its section', () => {
    const toc = tocView(events, doc);
    const searchOf = (href: string) =>
      find({ tag: 'div', attributes: {}, children: toc }, 'li').find((li) => li.children.some((a) => typeof a !== 'string' && a.attributes.href === href))!
        .attributes['data-search'];
    const issue = operationsOf(doc).find((e) => e.operation.operationId === 'issueTicket')!;
    expect(searchOf('#/events/op/issueTicket')).toBe(
      operationView(doc, { baseUrl: 'http://127.0.0.1:8080', origin: 'http://127.0.0.1:8080', service: 'events' }, issue).attributes['data-search'],
    );
    expect(searchOf('#/events/webhook/ticket.validated')).toBe(
      webhookView(doc, 'ticket.validated', doc.webhooks!['ticket.validated']!.post!).attributes['data-search'],
    );
    expect(searchOf('#/events/schema/TicketList')).toBe('ticketlist');
  });

  test('nothing to list: no groups', () => {
    expect(tocView(events, { openapi: '3.1.0' })).toEqual([]);
  });
});

describe('service tabs', () => {
  test("each service by its document's title, the current one marked, an unavailable one struck through", () => {
    const services: Service[] = [
      events,
      { name: 'pipelines', prefix: '/pipelines/v3', document: '/docs/pipelines.json' },
      { name: 'warehouse', prefix: '/warehouse/v1', document: '/docs/warehouse.json' },
    ];
    const documents = new Map<string, DocumentEntry>([
      ['events', { doc }],
      ['pipelines', { error: 'The pipelines service cannot give its API document right now.' }],
    ]);
    expect(serviceTabs(services, documents, 'events').map(html)).toEqual([
      '<li><a href="#/events" aria-current="page">Events API</a></li>',
      '<li><a href="#/pipelines" class="unavailable">pipelines (unavailable)</a></li>',
      '<li><a href="#/warehouse">warehouse</a></li>',
    ]);
  });
});

describe('addresses', () => {
  test.each([
    ['#/events/op/issueTicket', { service: 'events', targetId: 'op-issueTicket' }],
    ['#/events/op/get-/healthz', { service: 'events', targetId: 'op-get-/healthz' }],
    ['#/events/schema/Ticket%20v2', { service: 'events', targetId: 'schema-Ticket v2' }],
    ['#/warehouse', { service: 'warehouse', targetId: undefined }],
    ['#/events/op', { service: 'events', targetId: undefined }],
    ['', { service: undefined, targetId: undefined }],
    // A malformed escape is read as it is instead of stopping the page.
    ['#/events/op/%E0', { service: 'events', targetId: 'op-%E0' }],
  ])('%s', (hash, expected) => {
    expect(parseHash(hash)).toEqual(expected);
  });
});
