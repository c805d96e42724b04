// One operation, webhook or component schema as a section of the reference: its parameters,
// request body and answers, with the document's own examples.
import { inline, markdown } from './markdown.js';
import {
  deref,
  type Header,
  type OpenApiDocument,
  type Operation,
  type OperationEntry,
  type Parameter,
  type RequestBody,
  type Response,
  type Schema,
} from './openapi.js';
import { operationSamples, type SampleTarget } from './samples.js';
import { constraintText, exampleView, schemaView, typeLabel } from './schema.view.js';
import { el, type ViewElement } from './view.js';

/** The anchor id of an operation (`op-createEvent`); the sidebar links to it. */
export function operationAnchor({ path, method, operation }: OperationEntry): string {
  return operation.operationId ?? `${method}-${path}`;
}

/** What the filter matches an operation on: method, path, summary and scope. */
export function operationSearchText({ path, method, operation }: OperationEntry): string {
  return `${method} ${path} ${operation.summary ?? ''} ${operation['x-required-scope'] ?? ''}`.toLowerCase();
}

/** What the filter matches a webhook event on: its name and summary. */
export function webhookSearchText(name: string, operation: Operation): string {
  return `${name} ${operation.summary ?? ''}`.toLowerCase();
}

function headerRow(titles: string[]): ViewElement {
  return el(
    'thead',
    {},
    el(
      'tr',
      {},
      titles.map((title) => el('th', { scope: 'col' }, title)),
    ),
  );
}

export function parametersTable(doc: OpenApiDocument, parameters: Parameter[]): ViewElement {
  const rows = parameters.map((parameter) => {
    const p = deref(doc, parameter);
    const constraints = constraintText(p.schema ?? {});
    return el(
      'tr',
      {},
      el('td', {}, el('code', {}, p.name), p.required ? el('span', { class: 'required' }, 'required') : null),
      el('td', {}, p.in),
      el('td', {}, el('span', { class: 'type' }, typeLabel(doc, p.schema))),
      el('td', {}, p.description ? markdown(p.description) : null, constraints.length ? el('p', { class: 'constraints' }, constraints.join(' · ')) : null),
    );
  });
  return el('table', { class: 'props' }, headerRow(['Name', 'In', 'Type', 'Description']), el('tbody', {}, rows));
}

function headersTable(doc: OpenApiDocument, headers: Record<string, Header>): ViewElement {
  const rows = Object.entries(headers).map(([name, header]) => {
    const h = deref(doc, header);
    return el(
      'tr',
      {},
      el('td', {}, el('code', {}, name)),
      el('td', {}, el('span', { class: 'type' }, typeLabel(doc, h.schema))),
      el('td', {}, markdown(header.description ?? h.description ?? '')),
    );
  });
  return el('table', { class: 'props' }, headerRow(['Header', 'Type', 'Description']), el('tbody', {}, rows));
}

/** A JSON request body (an operation's, or the payload a webhook sends); null when there is none. */
export function bodyView(doc: OpenApiDocument, body: RequestBody | undefined, title: string): ViewElement | null {
  const resolved = deref(doc, body);
  const media = resolved.content?.['application/json'];
  if (!media) return null;
  return el(
    'div',
    {},
    el('h4', {}, title, resolved.required ? el('span', { class: 'required' }, 'required') : ''),
    resolved.description ? markdown(resolved.description) : null,
    schemaView(doc, media.schema ?? {}),
    media.example !== undefined ? exampleView(media.example) : null,
  );
}

/** Each answer, success open and errors folded: its headers, body schema and example. */
export function responsesView(doc: OpenApiDocument, responses: Record<string, Response> | undefined): ViewElement[] {
  return Object.entries(responses ?? {}).map(([status, response]) => {
    const r = deref(doc, response);
    const [title = '', ...rest] = String(r.description ?? '').split('\n\n');
    const media = r.content?.['application/json'];
    const schema: Schema | undefined = media?.schema;
    const ok = /^[123]/.test(status);
    const headers = r.headers && Object.keys(r.headers).length ? r.headers : undefined;
    return el(
      'details',
      { class: 'response', open: ok },
      el('summary', {}, el('span', { class: `status-code ${ok ? 'ok' : 'err'}` }, status), ...inline(title)),
      rest.length ? markdown(rest.join('\n\n')) : null,
      headers ? el('details', { class: 'nested' }, el('summary', {}, `Headers (${Object.keys(headers).join(', ')})`), headersTable(doc, headers)) : null,
      // Every error has the same body: its schema stays folded, its example shows what this one says.
      schema && !ok ? el('details', { class: 'nested' }, el('summary', {}, `Body: ${typeLabel(doc, schema)}`), schemaView(doc, schema)) : null,
      schema && ok ? schemaView(doc, schema) : null,
      media?.example !== undefined ? exampleView(media.example) : null,
    );
  });
}

/** The operation's curl command and @platform/client call, made from the document (samples.ts), as text. */
export function samplesView(doc: OpenApiDocument, target: SampleTarget, entry: OperationEntry): ViewElement {
  const { request, curl, client } = operationSamples(doc, target, entry);
  const sample = (kind: string, title: string, code: string): ViewElement =>
    el(
      'div',
      { class: 'sample', 'data-sample': kind },
      el('p', { class: 'sample-title' }, title, el('button', { type: 'button', class: 'copy', 'data-copy': kind }, 'Copy')),
      el('pre', {}, el('code', {}, code)),
    );
  const credential = request.credential;
  return el(
    'div',
    { class: 'samples' },
    el('h4', {}, 'Samples'),
    credential
      ? el(
          'p',
          { class: 'sample-note' },
          `Both read ${credential.kind === 'admin-token' ? 'the admin token' : 'an API key of the workspace'} from `,
          el('code', {}, credential.variable),
          '.',
        )
      : null,
    sample('curl', 'curl', curl),
    sample('client', 'TypeScript (@platform/client)', client),
  );
}

/** The gateway path of an API (`/events/v0`): the target's base URL without the page's origin. */
function prefixOf(target: SampleTarget): string {
  return target.baseUrl.startsWith(target.origin) ? target.baseUrl.slice(target.origin.length) : target.baseUrl;
}

/** An operation: `METHOD /prefix/path`, its description, ready-to-paste samples, parameters, request body and answers. */
export function operationView(doc: OpenApiDocument, target: SampleTarget, entry: OperationEntry): ViewElement {
  const { path, method, operation } = entry;
  const parameters = operation.parameters ?? [];
  return el(
    'section',
    { class: 'operation', id: `op-${operationAnchor(entry)}`, 'data-search': operationSearchText(entry) },
    el('h3', {}, operation.summary ?? `${method.toUpperCase()} ${path}`),
    el('p', { class: 'signature' }, el('span', { class: `method ${method}` }, method.toUpperCase()), el('span', { class: 'path' }, prefixOf(target) + path)),
    markdown(operation.description),
    samplesView(doc, target, entry),
    parameters.length ? [el('h4', {}, 'Parameters'), parametersTable(doc, parameters)] : null,
    operation.requestBody ? bodyView(doc, operation.requestBody, 'Request body') : null,
    el('h4', {}, 'Responses'),
    responsesView(doc, operation.responses),
  );
}

/** A webhook event: what the service POSTs to the subscriber's endpoint and the answer it expects. */
export function webhookView(doc: OpenApiDocument, name: string, operation: Operation): ViewElement {
  return el(
    'section',
    { class: 'operation', id: `webhook-${name}`, 'data-search': webhookSearchText(name, operation) },
    el('h3', {}, operation.summary ?? name),
    el('p', { class: 'signature' }, el('span', { class: 'method post' }, 'POST'), el('span', { class: 'path' }, `your endpoint · ${name}`)),
    markdown(operation.description),
    operation.parameters?.length ? [el('h4', {}, 'Headers'), parametersTable(doc, operation.parameters)] : null,
    bodyView(doc, operation.requestBody, 'Body'),
    el('h4', {}, 'Your answer'),
    responsesView(doc, operation.responses),
  );
}

/** A component schema with its first example. */
export function schemaCard(doc: OpenApiDocument, name: string, schema: Schema): ViewElement {
  return el(
    'section',
    { class: 'schema-card', id: `schema-${name}`, 'data-search': name.toLowerCase() },
    el('h3', {}, name),
    schemaView(doc, schema),
    Array.isArray(schema.examples) && schema.examples.length ? exampleView(schema.examples[0]) : null,
  );
}
