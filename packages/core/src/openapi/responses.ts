/**
 * The platform's answers as the API reference shows them: the response headers every answer
 * carries, the shared request parameters, and the error answers with their reasons and examples,
 * all from contract.ts and errors.ts.
 */
import { BUCKET_LIMITS, DEFAULT_VERSION, SUPPORTED_VERSIONS, type BucketName, type Scope } from '../contract';
import { internalError, notFound, rateLimited, type ApiError, type ErrorBody, type ErrorCode } from '../http/errors';
import { MAX_BODY_BYTES } from '../http/http';
import type { ErrorStatus } from './route-docs';
import type { JsonSchema } from './schemas';

/** One answer of an operation in the document. */
export interface OpenApiResponse {
  description: string;
  headers?: Record<string, JsonSchema>;
  content?: Record<string, { schema: JsonSchema; example?: unknown }>;
}

export const JSON_MEDIA_TYPE = 'application/json';
const EXAMPLE_REQUEST_ID = '3f0c1d9e-7a52-4b8e-9d1a-2f6c0e4b8a71';

/** A reference to a shared component of the document. */
export const ref = (kind: 'schemas' | 'headers' | 'parameters', name: string) => ({ $ref: `#/components/${kind}/${name}` });

const HEADERS = {
  requestId: 'x-request-id',
  version: 'platform-version',
  limit: 'X-RateLimit-Limit',
  remaining: 'X-RateLimit-Remaining',
  reset: 'X-RateLimit-Reset',
  retryAfter: 'Retry-After',
  replayed: 'idempotent-replayed',
} as const;

/** The response headers every answer carries, as `components.headers`. */
export function componentHeaders(): Record<string, JsonSchema> {
  const integer = { type: 'integer', minimum: 0 };
  return {
    [HEADERS.requestId]: {
      description: "The request's id: the client's `x-request-id` when it is 1-128 visible ASCII characters, else a generated one. Written in every log line.",
      required: true,
      schema: { type: 'string', maxLength: 128 },
    },
    [HEADERS.version]: {
      description: 'The platform version that served the request.',
      required: true,
      schema: { type: 'string', enum: [...SUPPORTED_VERSIONS] },
    },
    [HEADERS.limit]: { description: "The limit of the request's rate-limit bucket, per rolling 60 seconds.", required: true, schema: integer },
    [HEADERS.remaining]: { description: 'Requests left in the bucket after this one.', required: true, schema: integer },
    [HEADERS.reset]: {
      description: 'Unix epoch seconds at which one more request will be accepted (now while Remaining > 0).',
      required: true,
      schema: integer,
    },
    [HEADERS.retryAfter]: { description: 'Whole seconds to wait before retrying.', required: true, schema: { type: 'integer', minimum: 1 } },
    [HEADERS.replayed]: {
      description: 'Present on an answer replayed for a repeated `Idempotency-Key`: the first answer, nothing ran again.',
      schema: { type: 'string', const: 'true' },
    },
  };
}

/** The request headers every operation takes, as `components.parameters`. */
export function componentParameters(): Record<string, JsonSchema> {
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
        '(`idempotent-replayed: true`, nothing runs again; 5xx answers are not kept); with another body it is a 409 (`reused_with_different_body`); ' +
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

function shortExample(error: ApiError): Omit<ErrorBody['error'], 'request_id'> {
  return { code: error.code, message: error.message };
}

/** The `error` of a typical answer with this status (without `request_id`); no scope: an admin route. */
export function errorExample(status: ErrorStatus, scope: Scope | undefined): Omit<ErrorBody['error'], 'request_id'> {
  switch (status) {
    case 400:
      return {
        code: 'invalid_request',
        message: 'Request validation failed.',
        errors: [{ in: 'body', field: 'name', code: 'required', message: 'is required' }],
      };
    case 401:
      return { code: 'unauthorized', message: scope ? 'Missing or invalid bearer token.' : 'Missing or invalid admin token.' };
    case 403:
      return { code: 'forbidden_scope', message: `This token lacks the scope ${scope}.`, required_scope: scope };
    case 404:
      return shortExample(notFound());
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
      return shortExample(rateLimited());
    case 500:
      return shortExample(internalError());
    case 503:
      return { code: 'temporarily_unavailable', message: 'A backend is briefly unreachable; retry idempotently.' };
  }
}

function markdownList(lines: string[]): string {
  return lines.length === 1 ? lines[0]! : lines.map((line) => `- ${line}`).join('\n');
}

/** What decides an operation's platform errors: a service route's scope and bucket, or an admin route's admin token. */
export type OperationFacts = { method: string; hasPathParams: boolean; hasInput: boolean } & (
  { auth: 'api-key'; scope: Scope; bucket: BucketName } | { auth: 'admin-token' }
);

/**
 * An admin route's errors: the admin token instead of a key and its scopes, no rate-limit bucket
 * (only failed authentications are counted) and no Idempotency-Key.
 */
function adminErrorReasons(facts: OperationFacts, writes: boolean): Partial<Record<ErrorStatus, string[]>> {
  return {
    400: [
      ...(facts.hasInput ? ['The request failed validation: `error.errors[]` lists every problem at once (`in`, `field`, `code`, `message`).'] : []),
      ...(writes ? ['The body is not a JSON object sent as `application/json`, or unknown body fields were sent.'] : []),
    ],
    401: ['The bearer token is missing or is not the admin token (`PLATFORM_ADMIN_TOKEN`).'],
    ...(facts.hasPathParams ? { 404: ['No such workspace or API key.'] } : {}),
    408: ['The client did not send its whole request (headers and body) in time; the connection is closed after this answer.'],
    ...(writes
      ? {
          413: [`The body exceeds ${MAX_BODY_BYTES} bytes (1 MiB).`],
          415: ['The body was sent with a `content-encoding` other than `identity` (compressed request bodies are not accepted).'],
        }
      : {}),
    429: ['After 100 failed authentications in a minute, requests from that address without the admin token get 429 instead of 401; wait `Retry-After`.'],
    500: ['Something failed on our side; the body never carries details. Quote `request_id` when asking for support.'],
    503: ["The gateway's database is briefly unreachable."],
  };
}

/** The platform's reasons for each error status of an operation, before the route's own. */
export function platformErrorReasons(facts: OperationFacts): Partial<Record<ErrorStatus, string[]>> {
  const writes = facts.method === 'POST' || facts.method === 'PATCH';
  if (facts.auth === 'admin-token') return adminErrorReasons(facts, writes);
  const reasons: Partial<Record<ErrorStatus, string[]>> = {
    400: [
      ...(facts.hasInput ? ['The request failed validation: `error.errors[]` lists every problem at once (`in`, `field`, `code`, `message`).'] : []),
      ...(writes
        ? [
            'The body is not a JSON object sent as `application/json`, or unknown body fields were sent; or the `Idempotency-Key` is empty, too long or not visible ASCII.',
          ]
        : []),
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
  if (facts.hasPathParams) reasons[404] = ["No such resource in this workspace (another workspace's resources are reported the same way)."];
  if (writes) {
    reasons[409] = [
      'The `Idempotency-Key` was first used with a different body (`errors[0].code: reused_with_different_body`), or its first request is still running (`in_progress`, with `Retry-After`).',
    ];
    reasons[413] = [`The body exceeds ${MAX_BODY_BYTES} bytes (1 MiB).`];
    reasons[415] = ['The body was sent with a `content-encoding` other than `identity` (compressed request bodies are not accepted).'];
  }
  return reasons;
}

/**
 * The headers an answer with this status carries, by reference to the shared ones. The admin API's
 * answers carry no rate-limit headers (it has no bucket) and are never replayed (it takes no Idempotency-Key).
 */
export function commonResponseHeaders(status: number, method: string, auth: OperationFacts['auth'] = 'api-key'): Record<string, JsonSchema> {
  const headers: Record<string, JsonSchema> = {
    [HEADERS.requestId]: ref('headers', HEADERS.requestId),
    [HEADERS.version]: ref('headers', HEADERS.version),
    ...(auth === 'api-key'
      ? {
          [HEADERS.limit]: ref('headers', HEADERS.limit),
          [HEADERS.remaining]: ref('headers', HEADERS.remaining),
          [HEADERS.reset]: ref('headers', HEADERS.reset),
        }
      : {}),
  };
  if (status === 429 || status === 503) headers[HEADERS.retryAfter] = ref('headers', HEADERS.retryAfter);
  if (auth === 'admin-token') return headers;
  if (status === 409 && (method === 'POST' || method === 'PATCH')) {
    headers[HEADERS.retryAfter] = {
      description: 'Only while the first request with the same `Idempotency-Key` still runs.',
      schema: { type: 'integer', minimum: 1 },
    };
  }
  // Answers the service gave are kept for the key and replayed; the gateway's own refusals are not.
  const replayable = status < 500 && ![401, 403, 408, 413, 429].includes(status);
  if ((method === 'POST' || method === 'PATCH') && replayable) headers[HEADERS.replayed] = ref('headers', HEADERS.replayed);
  return headers;
}

/** An error answer of an operation: its reasons as markdown, the platform's headers and an example body. */
export function errorResponse(
  status: ErrorStatus,
  method: string,
  reasons: string[],
  example: Omit<ErrorBody['error'], 'request_id'>,
  auth: OperationFacts['auth'] = 'api-key',
): OpenApiResponse {
  return {
    description: `${ERROR_TITLES[status]} (\`${ERROR_CODE_OF[status]}\`).\n\n${markdownList(reasons)}`,
    headers: commonResponseHeaders(status, method, auth),
    content: { [JSON_MEDIA_TYPE]: { schema: ref('schemas', 'Error'), example: { error: { ...example, request_id: EXAMPLE_REQUEST_ID } } } },
  };
}
