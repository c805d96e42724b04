// Ready-to-paste calls of an operation, made from the document when the page shows it: a curl
// command and the same call through @platform/client. Nothing is written per route: the method,
// path, parameters, headers, credential and body all come from the operation and its schemas.
import { deref, pointer, refName, type OpenApiDocument, type Operation, type OperationEntry, type Parameter, type Schema } from './openapi.js';

/** Where the samples send their calls. */
export interface SampleTarget {
  /** The API's absolute base URL on the gateway, e.g. `http://127.0.0.1:8080/events/v0`. */
  baseUrl: string;
  /** The page's origin: the gateway the client is created for. */
  origin: string;
  /** The tab's name: a property of `createClient`'s client (`events`, `warehouse`, `pipelines`), or `admin`. */
  service: string;
}

/** Who a call authenticates as, and the shell variable (and `process.env` name) the samples read the secret from. */
export interface Credential {
  kind: 'api-key' | 'admin-token';
  variable: 'PLATFORM_API_KEY' | 'PLATFORM_ADMIN_TOKEN';
}

/** One call of an operation, with example values: what both samples send. */
export interface SampleRequest {
  method: string;
  /** The operation's path as the document names it (`/events/{id}/tickets`): the client's first argument. */
  path: string;
  /** The absolute URL the call goes to, path and query filled in. */
  url: string;
  credential: Credential | null;
  pathParams: Record<string, unknown>;
  query: Record<string, unknown>;
  /** Headers the operation requires, with their values. */
  headers: Record<string, string>;
  /** The `platform-version` the operation takes (the document's default), when it takes one. */
  version?: string;
  /** Whether the operation takes an `Idempotency-Key`. */
  idempotent: boolean;
  /** The JSON body, when the call sends one. */
  body?: unknown;
  /** The success answer's schema name (`Ticket`), when it has a body. */
  answer?: string;
}

/** Example UUIDs, one per id in a call, so a path with two ids shows two different ones. */
const EXAMPLE_UUIDS = [
  '3c6f0b7e-5d1a-4f2b-9e8c-7a1d2b3c4d5e',
  '9b2e4d6f-8a0c-4e1b-a3d5-c7e9f1a2b4c6',
  '5e7a9c1b-3d5f-4a7c-8e9b-1d3f5a7c9e2b',
  '7d9f1b3e-5a7c-4e9d-b1f3-5b7d9f1c3e5a',
];
const EXAMPLE_STRINGS: Readonly<Record<string, string>> = {
  'date-time': '2024-12-01T09:30:00.000Z',
  date: '2024-12-01',
  email: 'ada@example.com',
  uri: 'https://example.com/webhooks/platform',
  url: 'https://example.com/webhooks/platform',
};
// Deep enough for every body of the platform; a self-referencing schema stops here.
const MAX_DEPTH = 8;

/** Example values from a document's schemas: its own examples, constants, defaults and enums first; ids distinct within one call. */
export class ExampleValues {
  private uuids = 0;

  constructor(private readonly doc: OpenApiDocument) {}

  /** A value the schema accepts: an object holds its required fields only. */
  of(schema: Schema | undefined, depth = 0): unknown {
    const node = deref(this.doc, schema);
    if (Array.isArray(node.examples) && node.examples.length) return node.examples[0];
    if ('const' in node) return node.const;
    if (node.default !== undefined) return node.default;
    if (Array.isArray(node.enum) && node.enum.length) return node.enum[0];
    if (depth > MAX_DEPTH) return null;
    const union = node.oneOf ?? node.anyOf;
    if (Array.isArray(union)) {
      const branch = union.find((b) => deref(this.doc, b).type !== 'null') ?? union[0];
      return this.of(branch, depth + 1);
    }
    const types = Array.isArray(node.type) ? node.type.filter((t) => t !== 'null') : [node.type];
    const type = types[0] ?? (node.properties ? 'object' : undefined);
    switch (type) {
      case 'object': {
        const out: Record<string, unknown> = {};
        for (const name of node.required ?? []) out[name] = this.of(node.properties?.[name], depth + 1);
        return out;
      }
      case 'array':
        return Array.from({ length: Math.max(1, node.minItems ?? 1) }, () => this.of(node.items, depth + 1));
      case 'integer':
      case 'number':
        return Math.min(Math.max(node.minimum ?? (node.exclusiveMinimum ?? 0) + 1, 1), node.maximum ?? Number.MAX_SAFE_INTEGER);
      case 'boolean':
        return false;
      case 'string':
        return this.string(node);
      default:
        return null;
    }
  }

  private string(node: Schema): string {
    if (node.format === 'uuid') return EXAMPLE_UUIDS[this.uuids++ % EXAMPLE_UUIDS.length]!;
    const known = node.format ? EXAMPLE_STRINGS[node.format] : undefined;
    if (known) return known;
    const text = 'example'.padEnd(node.minLength ?? 0, '-');
    return node.maxLength !== undefined ? text.slice(0, Math.max(node.maxLength, 1)) : text;
  }
}

/** The security scheme an operation names (its own requirement, else the document's), as a credential of the platform. */
export function credentialOf(doc: OpenApiDocument, operation: Operation): Credential | null {
  const requirements = operation.security ?? doc.security ?? [];
  const name = Object.keys(requirements[0] ?? {})[0];
  if (name === undefined) return null;
  const scheme = doc.components?.securitySchemes?.[name];
  if (!scheme) return null;
  // The admin API's scheme takes the admin token; every other bearer scheme of the platform, an API key.
  return name === 'adminToken' ? { kind: 'admin-token', variable: 'PLATFORM_ADMIN_TOKEN' } : { kind: 'api-key', variable: 'PLATFORM_API_KEY' };
}

const isHeader = (parameter: Parameter, name: string): boolean => parameter.in === 'header' && parameter.name?.toLowerCase() === name;

/** The call both samples make: required parameters and those with a default, the headers the operation takes, and an example body. */
export function sampleRequest(doc: OpenApiDocument, target: SampleTarget, { path, method, operation }: OperationEntry): SampleRequest {
  const examples = new ExampleValues(doc);
  const parameters = (operation.parameters ?? []).map((parameter) => deref(doc, parameter));
  const valueOf = (parameter: Parameter): unknown => examples.of(parameter.schema);
  const request: SampleRequest = {
    method: method.toUpperCase(),
    path,
    url: '',
    credential: credentialOf(doc, operation),
    pathParams: {},
    query: {},
    headers: {},
    idempotent: parameters.some((parameter) => isHeader(parameter, 'idempotency-key')),
  };
  for (const parameter of parameters) {
    const name = parameter.name;
    if (name === undefined) continue;
    if (parameter.in === 'path') request.pathParams[name] = valueOf(parameter);
    // A default shows the knob without changing the answer; other optional filters are left out.
    else if (parameter.in === 'query' && (parameter.required || deref(doc, parameter.schema).default !== undefined)) request.query[name] = valueOf(parameter);
    else if (isHeader(parameter, 'platform-version')) request.version = String(valueOf(parameter));
    else if (parameter.in === 'header' && parameter.required && !isHeader(parameter, 'idempotency-key')) request.headers[name] = String(valueOf(parameter));
  }

  const filled = path.replace(/{([^}]+)}/g, (whole, name: string) =>
    name in request.pathParams ? encodeURIComponent(String(request.pathParams[name])) : whole,
  );
  const query = new URLSearchParams(Object.entries(request.query).map(([name, value]) => [name, String(value)])).toString();
  request.url = `${target.baseUrl}${filled}${query ? `?${query}` : ''}`;

  const body = deref(doc, operation.requestBody);
  const media = body.content?.['application/json'];
  if (media && (method === 'post' || method === 'put' || method === 'patch')) {
    const value = media.example ?? examples.of(media.schema);
    // An optional body with nothing to say is left out: an empty POST counts as `{}`.
    const empty = typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
    if (body.required || !empty) request.body = value;
  }

  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    if (!status.startsWith('2')) continue;
    const schema = deref(doc, response).content?.['application/json']?.schema;
    if (schema?.$ref && pointer(doc, schema.$ref) !== undefined) request.answer = refName(schema.$ref);
    break;
  }
  return request;
}

/** A word as one shell argument: single-quoted, each `'` closed, escaped and reopened. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The curl command: absolute URL, the credential from the environment, the headers the operation takes, and the body. */
export function curlSample(request: SampleRequest): string {
  const lines = [request.method === 'GET' ? `curl ${shellQuote(request.url)}` : `curl -X ${request.method} ${shellQuote(request.url)}`];
  // Double quotes: the shell puts the secret in from its variable.
  if (request.credential) lines.push(`-H "Authorization: Bearer $${request.credential.variable}"`);
  if (request.version !== undefined) lines.push(`-H ${shellQuote(`platform-version: ${request.version}`)}`);
  // A fresh key per call: pasting the command again after changing its body must not be a 409.
  if (request.idempotent) lines.push('-H "Idempotency-Key: $(openssl rand -hex 16)"');
  for (const [name, value] of Object.entries(request.headers)) lines.push(`-H ${shellQuote(`${name}: ${value}`)}`);
  if (request.body !== undefined) lines.push(`-H 'content-type: application/json'`, `-d ${shellQuote(JSON.stringify(request.body, null, 2))}`);
  return lines.join(' \\\n  ');
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const RESERVED = new Set(['admin', 'platform', 'unwrap', 'delete', 'new', 'default', 'function', 'class', 'const', 'let', 'var', 'import', 'export']);

function stringLiteral(text: string): string {
  return `'${JSON.stringify(text).slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'")}'`;
}

/** A value as TypeScript source: bare keys where they are identifiers, single quotes, one line when it fits in `width`. */
export function tsLiteral(value: unknown, indent = '', width = 100): string {
  if (typeof value === 'string') return stringLiteral(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'undefined';
  const inner = `${indent}  `;
  const parts = Array.isArray(value)
    ? value.map((item) => tsLiteral(item, inner))
    : Object.entries(value as Record<string, unknown>).map(([key, item]) => `${IDENTIFIER.test(key) ? key : stringLiteral(key)}: ${tsLiteral(item, inner)}`);
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  if (parts.length === 0) return `${open}${close}`;
  const oneLine = Array.isArray(value) ? `[${parts.join(', ')}]` : `{ ${parts.join(', ')} }`;
  if (oneLine.length + indent.length <= width && !oneLine.includes('\n')) return oneLine;
  return `${open}\n${parts.map((part) => `${inner}${part},`).join('\n')}\n${indent}${close}`;
}

/** The answer's variable: `Ticket` → `ticket`, `WorkspaceList` → `workspaceList`. */
function resultName(answer: string | undefined): string {
  const name = answer ? answer.charAt(0).toLowerCase() + answer.slice(1) : '';
  return IDENTIFIER.test(name) && !RESERVED.has(name) ? name : 'result';
}

/**
 * The same call through @platform/client: `createClient` and the service's typed client for an
 * API key, `createAdminClient` for the admin token; `unwrap` gives the answer or throws its error.
 */
export function clientSample(request: SampleRequest, target: SampleTarget): string {
  const admin = request.credential?.kind === 'admin-token';
  const factory = admin ? 'createAdminClient' : 'createClient';
  const secret = `process.env.${request.credential?.variable ?? 'PLATFORM_API_KEY'}!`;
  const settings = [`baseUrl: ${stringLiteral(target.origin)}`, `${admin ? 'adminToken' : 'apiKey'}: ${secret}`];
  const opening = admin ? 'const admin = createAdminClient({' : 'const platform = createClient({';
  const oneLine = `${opening} ${settings.join(', ')} });`;
  // The gateway's own address keeps the README's one line; a longer one gets a line per option.
  const setup = oneLine.length <= 120 ? oneLine : [opening, ...settings.map((option) => `  ${option},`), '});'].join('\n');
  const client = admin ? 'admin' : `platform.${IDENTIFIER.test(target.service) ? target.service : `[${stringLiteral(target.service)}]`}`;

  const params: Record<string, unknown> = {};
  if (Object.keys(request.pathParams).length) params.path = request.pathParams;
  if (Object.keys(request.query).length) params.query = request.query;
  if (Object.keys(request.headers).length) params.header = request.headers;
  const init: Record<string, unknown> = {};
  if (Object.keys(params).length) init.params = params;
  if (request.body !== undefined) init.body = request.body;
  const assign = `${request.answer ? `const ${resultName(request.answer)} = ` : ''}await unwrap(`;
  const head = `${assign}${client}.${request.method}(${stringLiteral(request.path)}`;
  // The options on the call's line when the whole line stays within 100 characters, else one field a line.
  const rest = Object.keys(init).length ? `, ${tsLiteral(init, '', 100 - head.length - 6)}` : '';

  const sent = [
    request.version !== undefined ? `platform-version: ${request.version}` : null,
    request.idempotent ? 'a fresh Idempotency-Key, kept on every retry' : null,
  ]
    .filter(Boolean)
    .join(' and ');
  return [`import { ${factory}, unwrap } from '@platform/client';`, '', setup, ...(sent ? [`// The client sends ${sent}.`] : []), `${head}${rest}));`].join(
    '\n',
  );
}

/** Both samples of an operation. */
export function operationSamples(doc: OpenApiDocument, target: SampleTarget, entry: OperationEntry): { request: SampleRequest; curl: string; client: string } {
  const request = sampleRequest(doc, target, entry);
  return { request, curl: curlSample(request), client: clientSample(request, target) };
}
