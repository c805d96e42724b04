/**
 * OpenAPI 3.1 documents generated from the route definitions: the zod schemas that validate a
 * request are the ones documented (`io: 'input'`), the output schemas the handlers render are the
 * answers (`io: 'output'`), and the platform's conventions (errors, headers, scopes, rate limits,
 * idempotency) come from contract.ts, so the reference cannot drift from the code.
 */
import { z } from 'zod';
import { BUCKET_LIMITS, DEFAULT_VERSION, parseRouteKey, ROUTES, SCOPES, SERVICES, SUPPORTED_VERSIONS, type BucketName, type Scope, type ServiceName } from './contract';
import { ErrorBody, type ErrorCode } from './errors';
import { MAX_BODY_BYTES } from './http';
import type { EventType } from './outbox';
import type { RouteDefinition } from './route';
import { Uuid, UtcTimestamp } from './validation';

export type JsonSchema = { [keyword: string]: unknown };

/** One success answer of a route. */
export interface ResponseDoc {
  description: string;
  /** The body as the handler renders it (an output schema); none for an empty answer (204). */
  schema?: z.ZodType;
  /** Default: the first of the schema's `examples`. */
  example?: unknown;
  /** Headers this answer sets besides the platform's own (`ETag`, `Location`). */
  headers?: Record<string, { description: string; schema?: z.ZodType }>;
}

export type ErrorStatus = 400 | 401 | 403 | 404 | 408 | 409 | 413 | 415 | 429 | 500 | 503;

/** What an error status means for one route, with an example of its `error` (without `request_id`). */
export interface ErrorDoc {
  description: string;
  example?: Omit<ErrorBody['error'], 'request_id'>;
}

/** A route's entry in the API reference; its schemas come from the route itself. */
export interface RouteDocs {
  /** Stable and unique in the service: SDK generators name methods after it. */
  operationId: string;
  summary: string;
  /** Markdown. */
  description?: string;
  /** The group in the reference; default: the path's first segment. */
  tag?: string;
  /** Success answers by status. */
  responses: Record<number, ResponseDoc>;
  /**
   * What error statuses mean for this route. The platform's own are always documented: 400, 401,
   * 403, 408, 429, 500 and 503 on every route, 404 with a path id, 409, 413 and 415 on POST and PATCH.
   */
  errors?: Partial<Record<ErrorStatus, string | ErrorDoc>>;
  /** The body as documented, when the handler parses it itself beyond the route's outline schema. */
  body?: z.ZodType;
  requestExample?: unknown;
}

/** A webhook event a service sends: `data` is the resource as the API returns it. */
export interface WebhookDoc {
  summary: string;
  data: z.ZodType;
}

export interface OpenApiOptions {
  service: ServiceName;
  title: string;
  /** The API's own version (`info.version`), e.g. `1.7`. */
  version: string;
  /** Markdown put before the platform's conventions. */
  description?: string;
  /** The service's route definitions, keyed like `ROUTES[service]`. */
  definitions: Readonly<Record<string, RouteDefinition>>;
  tags?: { name: string; description: string }[];
  /** The webhook events the service sends (OpenAPI 3.1 `webhooks`). */
  webhooks?: Partial<Record<EventType, WebhookDoc>>;
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: { url: string; description: string }[];
  security: Record<string, string[]>[];
  tags: { name: string; description?: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  webhooks?: Record<string, Record<string, OpenApiOperation>>;
  components: {
    schemas: Record<string, JsonSchema>;
    securitySchemes: Record<string, JsonSchema>;
    headers: Record<string, JsonSchema>;
    parameters: Record<string, JsonSchema>;
  };
}

export interface OpenApiOperation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: JsonSchema[];
  requestBody?: JsonSchema;
  responses?: Record<string, OpenApiResponse>;
  'x-required-scope'?: Scope;
  'x-rate-limit-bucket'?: BucketName;
}

export interface OpenApiResponse {
  description: string;
  headers?: Record<string, JsonSchema>;
  content?: Record<string, { schema: JsonSchema; example?: unknown }>;
}

const JSON_MEDIA_TYPE = 'application/json';
const EXAMPLE_REQUEST_ID = '3f0c1d9e-7a52-4b8e-9d1a-2f6c0e4b8a71';

/** The first example a schema's metadata gives, if any. */
export function exampleOf(schema: z.ZodType): unknown {
  const examples = z.globalRegistry.get(schema)?.examples;
  return Array.isArray(examples) ? examples[0] : undefined;
}

/** The list body (contract section 2) of a resource; the resource's example becomes the list's. */
export function listOf<T extends z.ZodType>(item: T, id: string) {
  const example = exampleOf(item);
  return z
    .object({
      data: z.array(item),
      next_cursor: z.string().nullable().meta({ description: 'Pass as `?cursor=` to get the next page; null on the last page.' }),
    })
    .meta({ id, description: 'One page of a list, oldest first.', ...(example === undefined ? {} : { examples: [{ data: [example], next_cursor: null }] }) });
}

function isTransform(schema: z.core.$ZodType): boolean {
  return schema._zod.traits.has('$ZodTransform');
}

/**
 * Collects named schemas (zod `id` metadata) into `components.schemas` and converts the rest in
 * place. Each conversion is JSON Schema 2020-12, the dialect of OpenAPI 3.1.
 */
class SchemaConverter {
  readonly components: Record<string, JsonSchema> = {};
  private readonly componentJson = new Map<string, string>();

  convert(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
    const json = z.toJSONSchema(schema, { io, target: 'draft-2020-12', override: (ctx) => this.refine(ctx, io) }) as JsonSchema;
    const { $schema: _dialect, $defs, ...rest } = json;
    for (const [id, def] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>)) this.addComponent(id, refsToComponents(def) as JsonSchema);
    return refsToComponents(rest) as JsonSchema;
  }

  private addComponent(id: string, json: JsonSchema): void {
    const text = JSON.stringify(json);
    const known = this.componentJson.get(id);
    // Two different schemas under one name would make one of them lie.
    if (known !== undefined && known !== text) throw new Error(`two different schemas are named ${id} in one document`);
    this.componentJson.set(id, text);
    this.components[id] = json;
  }

  private refine(ctx: { zodSchema: z.core.$ZodTypes; jsonSchema: JsonSchema }, io: 'input' | 'output'): void {
    const { zodSchema, jsonSchema } = ctx;
    const def = zodSchema._zod.def;
    // An input passes both sides of a pipe whose first side does not transform (`Slug.pipe(length)`,
    // a required enum); zod documents only the first side, so the second side's keywords join it.
    if (io === 'input' && def.type === 'pipe' && !isTransform(def.in) && !isTransform(def.out)) {
      const out = this.convert(def.out as z.ZodType, 'input');
      if (!('$ref' in out)) for (const [keyword, value] of Object.entries(out)) if (!(keyword in jsonSchema)) jsonSchema[keyword] = value;
    }
    // The format says it all; zod's regex for it is long and loses our case-insensitive flag.
    if ((jsonSchema.format === 'uuid' || jsonSchema.format === 'date-time') && 'pattern' in jsonSchema) delete jsonSchema.pattern;
    // zod bounds every integer by the safe range; said on every integer, it is noise.
    if (jsonSchema.type === 'integer') {
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
    }
    // Object keys are strings anyway.
    if (JSON.stringify(jsonSchema.propertyNames) === '{"type":"string"}') delete jsonSchema.propertyNames;
  }
}

function refsToComponents(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(refsToComponents);
  if (value === null || typeof value !== 'object') return value;
  const out: JsonSchema = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] = key === '$ref' && typeof inner === 'string' ? inner.replace(/^#\/\$defs\//, '#/components/schemas/') : refsToComponents(inner);
  }
  return out;
}

/** `/tickets/:id/validate` → `/tickets/{id}/validate`. */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

function headerName(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_all, dash: string, letter: string) => dash + letter.toUpperCase());
}

function titleOf(segment: string): string {
  const words = segment.replace(/-/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const ref = (kind: 'schemas' | 'headers' | 'parameters', name: string) => ({ $ref: `#/components/${kind}/${name}` });

const HEADERS = {
  requestId: 'x-request-id',
  version: 'platform-version',
  limit: 'X-RateLimit-Limit',
  remaining: 'X-RateLimit-Remaining',
  reset: 'X-RateLimit-Reset',
  retryAfter: 'Retry-After',
  replayed: 'idempotent-replayed',
} as const;

function componentHeaders(): Record<string, JsonSchema> {
  const integer = { type: 'integer', minimum: 0 };
  return {
    [HEADERS.requestId]: {
      description: "The request's id: the client's `x-request-id` when it is 1-128 visible ASCII characters, else a generated one. Written in every log line.",
      required: true,
      schema: { type: 'string', maxLength: 128 },
    },
    [HEADERS.version]: { description: 'The platform version that served the request.', required: true, schema: { type: 'string', enum: [...SUPPORTED_VERSIONS] } },
    [HEADERS.limit]: { description: "The limit of the request's rate-limit bucket, per rolling 60 seconds.", required: true, schema: integer },
    [HEADERS.remaining]: { description: 'Requests left in the bucket after this one.', required: true, schema: integer },
    [HEADERS.reset]: { description: 'Unix epoch seconds at which one more request will be accepted (now while Remaining > 0).', required: true, schema: integer },
    [HEADERS.retryAfter]: { description: 'Whole seconds to wait before retrying.', required: true, schema: { type: 'integer', minimum: 1 } },
    [HEADERS.replayed]: {
      description: 'Present on an answer replayed for a repeated `Idempotency-Key`: the first answer, nothing ran again.',
      schema: { type: 'string', const: 'true' },
    },
  };
}

function componentParameters(): Record<string, JsonSchema> {
  return {
    PlatformVersion: {
      name: 'platform-version',
      in: 'header',
      required: false,
      description: `The platform version to serve; absent: \`${DEFAULT_VERSION}\`. Any other value is a 400 (\`unsupported_version\`).`,
      schema: { type: 'string', enum: [...SUPPORTED_VERSIONS], default: DEFAULT_VERSION },
    },
    RequestId: {
      name: 'x-request-id',
      in: 'header',
      required: false,
      description: 'Your id for the request (1-128 visible ASCII characters); echoed back and written in every log line.',
      schema: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$' },
    },
    IdempotencyKey: {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'Makes a retry safe (Stripe semantics), kept 24 h per workspace, method and path. The same key with the same body replays the first answer ' +
        "(`idempotent-replayed: true`, nothing runs again; 5xx answers are not kept); with another body it is a 409 (`reused_with_different_body`); " +
        'while the first request still runs, a 409 with `Retry-After`.',
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
    },
  };
}

const ERROR_TITLES: Record<ErrorStatus, string> = {
  400: 'Invalid request',
  401: 'Not authenticated',
  403: 'Missing scope',
  404: 'Not found',
  408: 'Request too slow',
  409: 'Conflict',
  413: 'Body too large',
  415: 'Encoded body',
  429: 'Rate limited',
  500: 'Internal error',
  503: 'Temporarily unavailable',
};

const ERROR_CODE_OF: Record<ErrorStatus, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden_scope',
  404: 'not_found',
  408: 'request_timeout',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  500: 'internal_error',
  503: 'temporarily_unavailable',
};

function errorExample(status: ErrorStatus, scope: Scope): Omit<ErrorBody['error'], 'request_id'> {
  switch (status) {
    case 400:
      return {
        code: 'invalid_request',
        message: 'Request validation failed.',
        errors: [{ in: 'body', field: 'name', code: 'required', message: 'is required' }],
      };
    case 401:
      return { code: 'unauthorized', message: 'Missing or invalid bearer token.' };
    case 403:
      return { code: 'forbidden_scope', message: `This token lacks the scope ${scope}.`, required_scope: scope };
    case 404:
      return { code: 'not_found', message: 'Resource not found.' };
    case 409:
      return {
        code: 'conflict',
        message: 'This Idempotency-Key was already used with a different request body.',
        errors: [{ in: 'header', field: 'Idempotency-Key', code: 'reused_with_different_body', message: 'was first used with a different request body' }],
      };
    case 408:
      return { code: 'request_timeout', message: 'The request was not received in time.' };
    case 413:
      return { code: 'payload_too_large', message: `The request body exceeds ${MAX_BODY_BYTES} bytes.` };
    case 415:
      return { code: 'unsupported_media_type', message: 'Request bodies are accepted without content-encoding (identity) only.' };
    case 429:
      return { code: 'rate_limited', message: 'Rate limit exceeded; retry after the time in Retry-After.' };
    case 500:
      return { code: 'internal_error', message: 'Something went wrong on our side.' };
    case 503:
      return { code: 'temporarily_unavailable', message: 'A backend is briefly unreachable; retry idempotently.' };
  }
}

function markdownList(lines: string[]): string {
  return lines.length === 1 ? lines[0]! : lines.map((line) => `- ${line}`).join('\n');
}

interface OperationFacts {
  method: string;
  scope: Scope;
  bucket: BucketName;
  hasPathParams: boolean;
  hasInput: boolean;
}

/** The platform's reasons for each error status of an operation, before the route's own. */
function platformErrorReasons(facts: OperationFacts): Partial<Record<ErrorStatus, string[]>> {
  const writes = facts.method === 'POST' || facts.method === 'PATCH';
  const reasons: Partial<Record<ErrorStatus, string[]>> = {
    400: [
      ...(facts.hasInput ? ['The request failed validation: `error.errors[]` lists every problem at once (`in`, `field`, `code`, `message`).'] : []),
      ...(writes ? ['The body is not a JSON object sent as `application/json`, or unknown body fields were sent; or the `Idempotency-Key` is empty, too long or not visible ASCII.'] : []),
      'The `platform-version` header names an unsupported version (`errors[0].code: unsupported_version`).',
    ],
    401: ['The bearer token is missing, malformed, unknown, revoked or expired.'],
    403: [`The API key lacks the scope \`${facts.scope}\`; \`error.required_scope\` names it.`],
    429: [
      `The key used up its \`${facts.bucket}\` bucket (${BUCKET_LIMITS[facts.bucket]} requests per rolling minute by default); wait \`Retry-After\` seconds. ` +
        'Rejected requests do not count.',
      'After 100 failed authentications in a minute, requests from that address without a valid token get 429 instead of 401.',
    ],
    408: ['The client did not send its whole request (headers and body) in time; the connection is closed after this answer.'],
    500: ['Something failed on our side; the body never carries details. Quote `request_id` when asking for support.'],
    503: ['The service, or a database or queue it needs, is briefly unreachable or slower than the gateway timeout; retry idempotently after `Retry-After`.'],
  };
  if (facts.hasPathParams) reasons[404] = ['No such resource in this workspace (another workspace\'s resources are reported the same way).'];
  if (writes) {
    reasons[409] = [
      'The `Idempotency-Key` was first used with a different body (`errors[0].code: reused_with_different_body`), or its first request is still running (`in_progress`, with `Retry-After`).',
    ];
    reasons[413] = [`The body exceeds ${MAX_BODY_BYTES} bytes (1 MiB).`];
    reasons[415] = ['The body was sent with a `content-encoding` other than `identity` (compressed request bodies are not accepted).'];
  }
  return reasons;
}

function commonResponseHeaders(status: number, method: string): Record<string, JsonSchema> {
  const headers: Record<string, JsonSchema> = {
    [HEADERS.requestId]: ref('headers', HEADERS.requestId),
    [HEADERS.version]: ref('headers', HEADERS.version),
    [HEADERS.limit]: ref('headers', HEADERS.limit),
    [HEADERS.remaining]: ref('headers', HEADERS.remaining),
    [HEADERS.reset]: ref('headers', HEADERS.reset),
  };
  if (status === 429 || status === 503) headers[HEADERS.retryAfter] = ref('headers', HEADERS.retryAfter);
  if (status === 409 && (method === 'POST' || method === 'PATCH')) {
    headers[HEADERS.retryAfter] = { description: 'Only while the first request with the same `Idempotency-Key` still runs.', schema: { type: 'integer', minimum: 1 } };
  }
  // Answers the service gave are kept for the key and replayed; the gateway's own refusals are not.
  const replayable = status < 500 && ![401, 403, 408, 413, 429].includes(status);
  if ((method === 'POST' || method === 'PATCH') && replayable) headers[HEADERS.replayed] = ref('headers', HEADERS.replayed);
  return headers;
}

function platformDescription(service: ServiceName, serviceDescription: string | undefined): string {
  const buckets = (Object.keys(BUCKET_LIMITS) as BucketName[]).filter(
    (bucket) => bucket === SERVICES[service].bucket || Object.values<{ scope: string; bucket?: string }>(ROUTES[service]).some((spec) => spec.bucket === bucket),
  );
  return [
    ...(serviceDescription ? [serviceDescription, ''] : []),
    '## Authentication',
    'Send an API key of the workspace as `Authorization: Bearer plk_…`. Keys are created in the workspace settings ' +
      '(`/admin/v1`, the console at `/console`, or `platform keys create`). A key may be limited to scopes; every operation names the scope it needs.',
    '',
    '## Versioning',
    `Send \`platform-version: ${DEFAULT_VERSION}\` (the default when absent); any other value is a 400. Every answer carries the \`platform-version\` it was served with.`,
    '',
    '## Rate limits',
    'Per API key, per rolling 60 seconds, summed over every gateway instance:',
    '',
    '| bucket | limit | requests |',
    '|---|---|---|',
    ...buckets.map((bucket) => {
      const routes = Object.entries<{ scope: string; bucket?: string }>(ROUTES[service])
        .filter(([, spec]) => spec.bucket === bucket)
        .map(([key]) => `\`${openApiPath(key)}\``);
      const rest = buckets.length > 1 ? 'every other request' : 'every request';
      return `| \`${bucket}\` | ${BUCKET_LIMITS[bucket]} | ${routes.length > 0 ? routes.join(', ') : rest} |`;
    }),
    '',
    'Every answer carries `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`; a 429 carries `Retry-After`.',
    '',
    '## Idempotency',
    'Every POST and PATCH accepts `Idempotency-Key` (1-255 visible ASCII characters, kept 24 h per workspace, method and path): a retry with the same key and body ' +
      'gets the first answer again with `idempotent-replayed: true`.',
    '',
    '## Errors',
    'Every error has the body `{ "error": { "code", "message", "errors"?, "request_id", ... } }`; a 400 lists every problem in `errors[]`. ' +
      'Codes: `invalid_request` (400), `unauthorized` (401), `forbidden_scope` (403), `not_found` (404), `conflict` (409), `payload_too_large` (413), ' +
      '`rate_limited` (429), `internal_error` (500), `temporarily_unavailable` (503).',
    '',
    '## Conventions',
    'JSON only (`application/json; charset=utf-8`). Timestamps are RFC 3339 in UTC with milliseconds. Ids are UUIDs. ' +
      'Lists take `?limit=` (1-100, default 20) and `?cursor=` and answer `{ "data": [...], "next_cursor" }`. ' +
      'Another workspace\'s resource is reported as 404.',
  ].join('\n');
}

/** The scopes, for the security scheme's description. */
function scopesTable(): string {
  return SCOPES.map((scope) => `\`${scope}\``).join(', ');
}

/**
 * Stands in for a dependency when route definitions are built only to be documented: their
 * handlers never run then, and any use of the stand-in throws, naming it.
 */
export function documentationOnly<T extends object>(name: string): T {
  return new Proxy({} as T, {
    get: (_target, property) => {
      throw new Error(`${name}.${String(property)}: these route definitions were built to be documented, not to serve requests`);
    },
  });
}

/** Builds the OpenAPI 3.1 document of one service from its route definitions. */
export function openApiDocument(options: OpenApiOptions): OpenApiDocument {
  const { service } = options;
  const converter = new SchemaConverter();
  const routes = ROUTES[service] as Readonly<Record<string, { scope: Scope; bucket?: BucketName }>>;
  for (const key of Object.keys(options.definitions)) if (!routes[key]) throw new Error(`${key} is not in the route table of ${service}`);

  const paths: OpenApiDocument['paths'] = {};
  const tags = new Map<string, string | undefined>((options.tags ?? []).map((tag) => [tag.name, tag.description]));

  for (const [key, spec] of Object.entries(routes)) {
    const { method, path } = parseRouteKey(key);
    const definition = options.definitions[key];
    const operation = operationFor(converter, method, path, { scope: spec.scope, bucket: spec.bucket ?? SERVICES[service].bucket }, definition);
    for (const tag of operation.tags ?? []) if (!tags.has(tag)) tags.set(tag, undefined);
    (paths[openApiPath(path)] ??= {})[method.toLowerCase()] = operation;
  }

  const webhooks = options.webhooks ? webhookOperations(converter, options.webhooks) : undefined;
  // Registers `Error` and `FieldError` among the components (every error answer refers to them).
  converter.convert(ErrorBody, 'output');
  if (webhooks) tags.set('Webhook events', 'Requests the platform sends to your webhook endpoints, signed as Standard Webhooks.');

  return {
    openapi: '3.1.0',
    info: { title: options.title, version: options.version, description: platformDescription(service, options.description) },
    servers: [{ url: SERVICES[service].prefix, description: `The platform gateway, \`{gateway}${SERVICES[service].prefix}\` (relative to the gateway that serves this document at /docs).` }],
    security: [{ bearer: [] }],
    tags: [...tags].map(([name, description]) => (description ? { name, description } : { name })),
    paths,
    ...(webhooks ? { webhooks } : {}),
    components: {
      schemas: converter.components,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'plk_…',
          description:
            `An API key of the workspace. A key may be limited to scopes (${scopesTable()}); ` +
            'each operation lists the scope it needs as the role of its security requirement and in `x-required-scope`.',
        },
      },
      headers: componentHeaders(),
      parameters: componentParameters(),
    },
  };
}

function parametersOf(converter: SchemaConverter, schema: z.ZodType | undefined, location: 'path' | 'query' | 'header'): JsonSchema[] {
  if (!schema) return [];
  const json = converter.convert(schema, 'input');
  const required = new Set(Array.isArray(json.required) ? (json.required as string[]) : []);
  return Object.entries((json.properties ?? {}) as Record<string, JsonSchema>).map(([name, property]) => {
    const { description, ...propertySchema } = property;
    return {
      name: location === 'header' ? headerName(name) : name,
      in: location,
      required: location === 'path' || required.has(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: propertySchema,
    };
  });
}

function errorResponse(status: ErrorStatus, method: string, reasons: string[], example: Omit<ErrorBody['error'], 'request_id'>): OpenApiResponse {
  return {
    description: `${ERROR_TITLES[status]} (\`${ERROR_CODE_OF[status]}\`).\n\n${markdownList(reasons)}`,
    headers: commonResponseHeaders(status, method),
    content: { [JSON_MEDIA_TYPE]: { schema: ref('schemas', 'Error'), example: { error: { ...example, request_id: EXAMPLE_REQUEST_ID } } } },
  };
}

function operationFor(
  converter: SchemaConverter,
  method: string,
  path: string,
  spec: { scope: Scope; bucket: BucketName },
  definition: RouteDefinition | undefined,
): OpenApiOperation {
  const schemas = definition?.schemas ?? {};
  const docs = definition?.docs;
  const writes = method === 'POST' || method === 'PATCH';
  const bodySchema = docs?.body ?? schemas.body;
  const facts: OperationFacts = {
    method,
    scope: spec.scope,
    bucket: spec.bucket,
    hasPathParams: path.includes(':'),
    hasInput: Boolean(schemas.params ?? schemas.query ?? schemas.headers ?? bodySchema),
  };

  const pathParameters = parametersOf(converter, schemas.params, 'path');
  // A path without its params schema still names its params (an OpenAPI document must).
  for (const [, name] of path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)) {
    if (!pathParameters.some((parameter) => parameter.name === name)) pathParameters.push({ name, in: 'path', required: true, schema: { type: 'string' } });
  }
  const parameters = [
    ...pathParameters,
    ...parametersOf(converter, schemas.query, 'query'),
    ...parametersOf(converter, schemas.headers, 'header'),
    ref('parameters', 'PlatformVersion'),
    ref('parameters', 'RequestId'),
    ...(writes ? [ref('parameters', 'IdempotencyKey')] : []),
  ];

  let requestBody: JsonSchema | undefined;
  if (bodySchema && writes) {
    const json = converter.convert(bodySchema, 'input');
    const required = Array.isArray(json.required) && json.required.length > 0;
    requestBody = {
      required,
      ...(required ? {} : { description: 'Every field is optional; an empty body counts as `{}`.' }),
      content: { [JSON_MEDIA_TYPE]: { schema: json, ...(docs?.requestExample === undefined ? {} : { example: docs.requestExample }) } },
    };
  }

  const responses: Record<string, OpenApiResponse> = {};
  for (const [status, response] of Object.entries(docs?.responses ?? {})) {
    const headers = { ...commonResponseHeaders(Number(status), method) };
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      headers[name] = { description: header.description, required: true, schema: header.schema ? converter.convert(header.schema, 'output') : { type: 'string' } };
    }
    const example = response.example ?? (response.schema ? exampleOf(response.schema) : undefined);
    responses[status] = {
      description: response.description,
      headers,
      ...(response.schema
        ? { content: { [JSON_MEDIA_TYPE]: { schema: converter.convert(response.schema, 'output'), ...(example === undefined ? {} : { example }) } } }
        : {}),
    };
  }
  if (docs) {
    const reasons = platformErrorReasons(facts);
    const statuses = new Set<ErrorStatus>([...(Object.keys(reasons).map(Number) as ErrorStatus[]), ...(Object.keys(docs.errors ?? {}).map(Number) as ErrorStatus[])]);
    for (const status of [...statuses].sort((a, b) => a - b)) {
      const own = docs.errors?.[status];
      const ownDoc: ErrorDoc | undefined = typeof own === 'string' ? { description: own } : own;
      // The route's own 404 says what is missing; the platform's generic one adds nothing then.
      const platform = status === 404 && ownDoc ? [] : (reasons[status] ?? []);
      const lines = [...(ownDoc ? [ownDoc.description] : []), ...platform];
      responses[String(status)] = errorResponse(status, method, lines, ownDoc?.example ?? errorExample(status, spec.scope));
    }
  }

  const rateLimit = `${BUCKET_LIMITS[spec.bucket]} requests per minute per key (bucket \`${spec.bucket}\`)`;
  return {
    ...(docs ? { operationId: docs.operationId, summary: docs.summary } : {}),
    description: [...(docs?.description ? [docs.description, ''] : []), `**Scope:** \`${spec.scope}\` · **Rate limit:** ${rateLimit}.`].join('\n'),
    tags: [docs?.tag ?? titleOf(path.split('/')[1] ?? '')],
    security: [{ bearer: [spec.scope] }],
    'x-required-scope': spec.scope,
    'x-rate-limit-bucket': spec.bucket,
    parameters,
    ...(requestBody ? { requestBody } : {}),
    ...(docs ? { responses } : {}),
  };
}

const WebhookEventId = z.string().regex(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/).meta({ description: 'The event id; the same on every retry (`webhook-id`).', examples: ['evt_01JE2Z3K4M5N6P7Q8R9S0T1V2W'] });

function webhookOperations(converter: SchemaConverter, events: Partial<Record<EventType, WebhookDoc>>): Record<string, Record<string, OpenApiOperation>> {
  const out: Record<string, Record<string, OpenApiOperation>> = {};
  const header = (name: string, description: string, schema: JsonSchema): JsonSchema => ({ name, in: 'header', required: true, description, schema });
  for (const [type, doc] of Object.entries(events) as [EventType, WebhookDoc][]) {
    const event = z.object({ id: WebhookEventId, type: z.literal(type), created_at: UtcTimestamp, workspace_id: Uuid, data: doc.data });
    const data = exampleOf(doc.data);
    out[type] = {
      post: {
        operationId: `webhook.${type}`,
        summary: doc.summary,
        description:
          `Sent to every enabled endpoint subscribed to \`${type}\` (or \`*\`), at least once: a non-2xx answer or a timeout (10 s) is retried with backoff. ` +
          'Verify the signature before trusting the body.',
        tags: ['Webhook events'],
        security: [],
        parameters: [
          header('webhook-id', 'The event id, the same on every retry: deduplicate on it.', { type: 'string' }),
          header('webhook-timestamp', 'Unix epoch seconds of this attempt; accept it within ±300 s.', { type: 'integer' }),
          header(
            'webhook-signature',
            '`v1,` + base64 HMAC-SHA256 over `id.timestamp.body` with the base64-decoded part of the secret after `whsec_`; several space-separated while a secret is rotated.',
            { type: 'string' },
          ),
        ],
        requestBody: {
          required: true,
          content: {
            [JSON_MEDIA_TYPE]: {
              schema: converter.convert(event, 'output'),
              ...(data === undefined
                ? {}
                : { example: { id: 'evt_01JE2Z3K4M5N6P7Q8R9S0T1V2W', type, created_at: '2024-12-01T09:30:00.000Z', workspace_id: '8d2f4c1a-6b3e-4f5a-9c7d-1e2f3a4b5c6d', data } }),
            },
          },
        },
        responses: {
          '2XX': { description: 'Delivered: any 2xx counts as success.' },
          '410': { description: 'Gone: the endpoint is disabled and gets no further events.' },
        },
      },
    };
  }
  return out;
}

/**
 * Contract routes whose operation in `document` lacks a summary, its scope or a success answer;
 * empty when every route of the service is documented.
 */
export function undocumentedRoutes(document: OpenApiDocument, service: ServiceName): string[] {
  return Object.entries(ROUTES[service] as Readonly<Record<string, { scope: Scope }>>)
    .filter(([key, spec]) => {
      const { method, path } = parseRouteKey(key);
      const operation = document.paths[openApiPath(path)]?.[method.toLowerCase()];
      return (
        !operation?.summary ||
        operation['x-required-scope'] !== spec.scope ||
        !operation.security?.some((requirement) => requirement.bearer?.includes(spec.scope)) ||
        !Object.keys(operation.responses ?? {}).some((status) => status.startsWith('2'))
      );
    })
    .map(([key]) => key);
}
