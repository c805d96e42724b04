import { operationsOf } from './openapi.js';
import { bodyView, operationView, parametersTable, responsesView, schemaCard, webhookView } from './operation.view.js';
import { ticketsDocument } from './test/documents.js';
import { find, html, text } from './test/html.js';

const doc = ticketsDocument();
const target = { baseUrl: 'http://127.0.0.1:8080/events/v0', origin: 'http://127.0.0.1:8080', service: 'events' };
const entry = (operationId: string) => operationsOf(doc).find((e) => e.operation.operationId === operationId)!;

describe('operation', () => {
  test('a section the sidebar links to, with its signature under the gateway prefix and the words the filter matches', () => {
    const view = operationView(doc, target, entry('issueTicket'));
    expect(view.attributes).toEqual({ class: 'operation', id: 'op-issueTicket', 'data-search': 'post /events/{id}/tickets issue a ticket events:write' });
    expect(html(view.children[0]!)).toBe('<h3>Issue a ticket</h3>');
    expect(html(view.children[1]!)).toBe(
      '<p class="signature"><span class="method post">POST</span><span class="path">/events/v0/events/{id}/tickets</span></p>',
    );
    expect(find(view, 'h4').map(text)).toEqual(['Samples', 'Parameters', 'Request bodyrequired', 'Responses']);
  });

  test('without an operationId or summary: named by method and path', () => {
    const view = operationView(doc, { ...target, baseUrl: target.origin }, { path: '/healthz', method: 'get', operation: doc.paths!['/healthz']!.get! });
    expect(view.attributes.id).toBe('op-get-/healthz');
    expect(html(view.children[0]!)).toBe('<h3>GET /healthz</h3>');
    expect(find(view, 'h4').map(text)).toEqual(['Samples', 'Responses']);
  });

  test('parameters, referenced or inline: name, required, where, type and constraints', () => {
    const table = parametersTable(doc, entry('listTickets').operation.parameters!);
    expect(find(table, 'th').map(text)).toEqual(['Name', 'In', 'Type', 'Description']);
    expect(
      find(table, 'tr')
        .slice(1)
        .map((row) => row.children.map(text)),
    ).toEqual([
      ['idrequired', 'path', 'string (uuid)', ''],
      ['limit', 'query', 'integer', 'Page size.1-100 · default 20'],
    ]);
  });

  test('a request body: required marker, schema and example', () => {
    const view = bodyView(doc, entry('issueTicket').operation.requestBody, 'Request body')!;
    expect(html(view.children[0]!)).toBe('<h4>Request body<span class="required">required</span></h4>');
    expect(find(view, 'code').map(text)).toEqual(['holder_name', '{\n  "holder_name": "Ada Lovelace"\n}']);
    expect(bodyView(doc, undefined, 'Body')).toBeNull();
    expect(bodyView(doc, { content: { 'text/plain': {} } }, 'Body')).toBeNull();
  });

  test('answers: a success open with its schema, an error folded with its body schema and example', () => {
    const [created, notFound] = responsesView(doc, entry('issueTicket').operation.responses);
    expect(created!.attributes).toEqual({ class: 'response', open: '' });
    expect(html(created!.children[0]!)).toBe('<summary><span class="status-code ok">201</span>The ticket.</summary>');
    expect(html(created!.children[1]!)).toBe('<div class="markdown"><p>Issued at once.</p></div>');
    expect(find(created!, 'summary').map(text)).toEqual(['201The ticket.', 'Headers (x-request-id)']);
    expect(
      find(created!, 'tr')
        .slice(1, 2)
        .map((row) => row.children.map(text)),
    ).toEqual([['x-request-id', 'string', 'The request id.']]);
    expect(find(created!, 'h4')).toEqual([]);

    expect(notFound!.attributes).toEqual({ class: 'response' });
    expect(find(notFound!, 'summary').map(text)).toEqual(['404No such event.', 'Body: Error', 'Fields of error', 'Example']);
    expect(text(find(notFound!, 'pre')[0]!)).toBe('{\n  "error": {\n    "code": "not_found"\n  }\n}');
  });

  test('no answers documented: none shown', () => {
    expect(responsesView(doc, undefined)).toEqual([]);
  });
});

describe('webhook event', () => {
  test("POST to the subscriber's endpoint, the body it sends and the answer it expects", () => {
    const view = webhookView(doc, 'ticket.validated', doc.webhooks!['ticket.validated']!.post!);
    expect(view.attributes).toEqual({ class: 'operation', id: 'webhook-ticket.validated', 'data-search': 'ticket.validated a ticket was validated' });
    expect(html(view.children[1]!)).toBe(
      '<p class="signature"><span class="method post">POST</span><span class="path">your endpoint · ticket.validated</span></p>',
    );
    expect(find(view, 'h4').map(text)).toEqual(['Body', 'Your answer']);
    expect(find(view, 'summary').map(text)).toEqual(['Fields of data', '2XXReceived.']);
  });
});

describe('schema card', () => {
  test('the component with its first example', () => {
    const view = schemaCard(doc, 'Ticket', doc.components!.schemas!.Ticket!);
    expect(view.attributes).toEqual({ class: 'schema-card', id: 'schema-Ticket', 'data-search': 'ticket' });
    expect(find(view, 'pre').map(text)).toEqual(['{\n  "id": "5b7d9f1e-2c4a-4e6b-8d0f-3a5c7e9b1d2f",\n  "status": "issued"\n}']);
    expect(find(schemaCard(doc, 'Error', doc.components!.schemas!.Error!), 'pre')).toEqual([]);
  });
});
