/**
 * OpenAPI 3.1 documents generated from the route declarations: the zod schemas that validate a
 * request are the ones documented (`io: 'input'`), the output schemas the handlers render are the
 * answers (`io: 'output'`), and the platform's conventions (errors, headers, scopes, rate limits,
 * idempotency) come from contract.ts, so the reference cannot drift from the code.
 */
import { z } from 'zod';
import {
  ADMIN_PREFIX,
  ADMIN_ROUTES,
  BUCKET_LIMITS,
  DEFAULT_VERSION,
  parseRouteKey,
  ROUTES,
  SCOPES,
  SERVICES,
  type AdminRouteKey,
  type BucketName,
  type Scope,
  type ServiceName,
} from '../contract';
import { ErrorBody } from '../http/errors';
import type { RouteDeclaration } from '../http/route';
import { Uuid, UtcTimestamp } from '../http/validation';
import {
  commonResponseHeaders,
  componentHeaders,
  componentParameters,
  errorExample,
  errorResponse,
  JSON_MEDIA_TYPE,
  platformErrorReasons,
  ref,
  type OpenApiResponse,
  type OperationFacts,
} from './responses';
import type { ErrorDoc, ErrorStatus, WebhookDoc, WebhookDocs } from './route-docs';
import { exampleOf, SchemaConverter, type JsonSchema } from './schemas';

export type { OpenApiResponse } from './responses';

export interface OpenApiOptions {
  service: ServiceName;
  title: string;
  /** The API's own version (`info.version`), e.g. `1.7`. */
  version: string;
  /** Markdown put before the platform's conventions. */
  description?: string;
  /** The service's route declarations (schemas and docs, no handlers), keyed like `ROUTES[service]`. */
  routes: Readonly<Record<string, RouteDeclaration>>;
  tags?: { name: string; description: string }[];
  /** The webhook events the service sends (OpenAPI 3.1 `webhooks`). */
  webhooks?: WebhookDocs;
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

function platformDescription(service: ServiceName, serviceDescription: string | undefined): string {
  const buckets = (Object.keys(BUCKET_LIMITS) as BucketName[]).filter(
    (bucket) =>
      bucket === SERVICES[service].bucket || Object.values<{ scope: string; bucket?: string }>(ROUTES[service]).some((spec) => spec.bucket === bucket),
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
      "Another workspace's resource is reported as 404.",
  ].join('\n');
}

/** The scopes, for the security scheme's description. */
function scopesTable(): string {
  return SCOPES.map((scope) => `\`${scope}\``).join(', ');
}

/** Builds the OpenAPI 3.1 document of one service from its route declarations: no handler, store or database is needed. */
export function openApiDocument(options: OpenApiOptions): OpenApiDocument {
  const { service } = options;
  const converter = new SchemaConverter();
  const routes = ROUTES[service] as Readonly<Record<string, { scope: Scope; bucket?: BucketName }>>;
  for (const key of Object.keys(options.routes)) if (!routes[key]) throw new Error(`${key} is not in the route table of ${service}`);

  const paths: OpenApiDocument['paths'] = {};
  const tags = new Map<string, string | undefined>((options.tags ?? []).map((tag) => [tag.name, tag.description]));

  for (const [key, spec] of Object.entries(routes)) {
    const { method, path } = parseRouteKey(key);
    const declaration = options.routes[key];
    const auth = { auth: 'api-key', scope: spec.scope, bucket: spec.bucket ?? SERVICES[service].bucket } as const;
    const operation = operationFor(converter, method, path, auth, declaration);
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
    servers: [
      {
        url: SERVICES[service].prefix,
        description: `The platform gateway, \`{gateway}${SERVICES[service].prefix}\` (relative to the gateway that serves this document at /docs).`,
      },
    ],
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

export interface AdminOpenApiOptions {
  title: string;
  version: string;
  /** Markdown put before the conventions. */
  description?: string;
  /** The admin API's route declarations, keyed like `ADMIN_ROUTES`. */
  routes: Readonly<Record<AdminRouteKey, RouteDeclaration>>;
  tags?: { name: string; description: string }[];
}

/**
 * Builds the OpenAPI 3.1 document of the admin API (`/admin/v1`, contract sections 3 and 16) from
 * its route declarations: the same conventions as a service's, but authenticated with the admin
 * token, with no scopes, rate-limit buckets or Idempotency-Key.
 */
export function adminOpenApiDocument(options: AdminOpenApiOptions): OpenApiDocument {
  const converter = new SchemaConverter();
  const paths: OpenApiDocument['paths'] = {};
  const tags = new Map<string, string | undefined>((options.tags ?? []).map((tag) => [tag.name, tag.description]));
  for (const key of Object.keys(ADMIN_ROUTES) as AdminRouteKey[]) {
    const { method, path } = parseRouteKey(key);
    const operation = operationFor(converter, method, path, { auth: 'admin-token' }, options.routes[key]);
    for (const tag of operation.tags ?? []) if (!tags.has(tag)) tags.set(tag, undefined);
    (paths[openApiPath(path)] ??= {})[method.toLowerCase()] = operation;
  }
  converter.convert(ErrorBody, 'output');
  const description = [
    ...(options.description ? [options.description, ''] : []),
    '## Authentication',
    "Send the platform's admin token as `Authorization: Bearer $PLATFORM_ADMIN_TOKEN`; any other token is a 401. After 100 failed authentications " +
      'in a minute from one address, its further requests without the admin token get 429 with `Retry-After`.',
    '',
    '## Errors and conventions',
    'As the services\': the error body `{ "error": { "code", "message", "errors"?, "request_id" } }`, JSON only, RFC 3339 UTC timestamps, UUID ids, ' +
      'lists with `?limit=` (1-100, default 20) and `?cursor=` answering `{ "data": [...], "next_cursor" }`. No `Idempotency-Key`: a POST retried ' +
      'after a lost answer runs again.',
  ].join('\n');
  return {
    openapi: '3.1.0',
    info: { title: options.title, version: options.version, description },
    servers: [{ url: ADMIN_PREFIX, description: `The platform gateway, \`{gateway}${ADMIN_PREFIX}\`.` }],
    security: [{ adminToken: [] }],
    tags: [...tags].map(([name, tagDescription]) => (tagDescription ? { name, description: tagDescription } : { name })),
    paths,
    components: {
      schemas: converter.components,
      securitySchemes: { adminToken: { type: 'http', scheme: 'bearer', description: "The platform's admin token (`PLATFORM_ADMIN_TOKEN`)." } },
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

/** Who may call an operation: an API key with a scope (counted in a bucket), or the admin token. */
type OperationAuth = { auth: 'api-key'; scope: Scope; bucket: BucketName } | { auth: 'admin-token' };

function operationFor(
  converter: SchemaConverter,
  method: string,
  path: string,
  spec: OperationAuth,
  declaration: RouteDeclaration | undefined,
): OpenApiOperation {
  const { docs, ...schemas } = declaration ?? {};
  const writes = method === 'POST' || method === 'PATCH';
  const keyed = spec.auth === 'api-key';
  const bodySchema = docs?.body ?? schemas.body;
  const facts: OperationFacts = {
    method,
    ...spec,
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
    ...(keyed ? [ref('parameters', 'PlatformVersion')] : []),
    ref('parameters', 'RequestId'),
    ...(writes && keyed ? [ref('parameters', 'IdempotencyKey')] : []),
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
    const headers = { ...commonResponseHeaders(Number(status), method, spec.auth) };
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      headers[name] = {
        description: header.description,
        required: true,
        schema: header.schema ? converter.convert(header.schema, 'output') : { type: 'string' },
      };
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
    const statuses = new Set<ErrorStatus>([
      ...(Object.keys(reasons).map(Number) as ErrorStatus[]),
      ...(Object.keys(docs.errors ?? {}).map(Number) as ErrorStatus[]),
    ]);
    for (const status of [...statuses].sort((a, b) => a - b)) {
      const own = docs.errors?.[status];
      const ownDoc: ErrorDoc | undefined = typeof own === 'string' ? { description: own } : own;
      // The route's own 404 says what is missing; the platform's generic one adds nothing then.
      const platform = status === 404 && ownDoc ? [] : (reasons[status] ?? []);
      const lines = [...(ownDoc ? [ownDoc.description] : []), ...platform];
      const example = ownDoc?.example ?? errorExample(status, keyed ? spec.scope : undefined);
      responses[String(status)] = errorResponse(status, method, lines, example, spec.auth);
    }
  }

  const access = keyed
    ? `**Scope:** \`${spec.scope}\` · **Rate limit:** ${BUCKET_LIMITS[spec.bucket]} requests per minute per key (bucket \`${spec.bucket}\`).`
    : '**Authentication:** the admin token.';
  return {
    ...(docs ? { operationId: docs.operationId, summary: docs.summary } : {}),
    description: [...(docs?.description ? [docs.description, ''] : []), access].join('\n'),
    tags: [docs?.tag ?? titleOf(path.split('/')[1] ?? '')],
    ...(keyed
      ? { security: [{ bearer: [spec.scope] }], 'x-required-scope': spec.scope, 'x-rate-limit-bucket': spec.bucket }
      : { security: [{ adminToken: [] }] }),
    parameters,
    ...(requestBody ? { requestBody } : {}),
    ...(docs ? { responses } : {}),
  };
}

const WebhookEventId = z
  .string()
  .regex(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/)
  .meta({ description: 'The event id; the same on every retry (`webhook-id`).', examples: ['evt_01JE2Z3K4M5N6P7Q8R9S0T1V2W'] });

function webhookOperations(converter: SchemaConverter, events: WebhookDocs): Record<string, Record<string, OpenApiOperation>> {
  const out: Record<string, Record<string, OpenApiOperation>> = {};
  const header = (name: string, description: string, schema: JsonSchema): JsonSchema => ({ name, in: 'header', required: true, description, schema });
  for (const [type, doc] of Object.entries<WebhookDoc>(events)) {
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
                : {
                    example: {
                      id: 'evt_01JE2Z3K4M5N6P7Q8R9S0T1V2W',
                      type,
                      created_at: '2024-12-01T09:30:00.000Z',
                      workspace_id: '8d2f4c1a-6b3e-4f5a-9c7d-1e2f3a4b5c6d',
                      data,
                    },
                  }),
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
